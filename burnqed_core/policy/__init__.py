"""Policies: prompt format, the Policy protocol, local and SGLang backends."""
