"""Policies: the Policy protocol, local and SGLang backends (the prompt
format they share with training is `burnqed_core.data.pairs.prompt`)."""
