"""Deployments the project starts itself (a local Celery broker and workers)."""
