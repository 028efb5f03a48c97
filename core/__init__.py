"""Foundations: config, the LLM gateway, the database, the vector store, jobs and artifacts.

Nothing here imports a method, an agent or an entrypoint (see the layers contract in pyproject.toml).
"""

from core.env import apply_offline_defaults

apply_offline_defaults()  # before any entrypoint loads litellm or a Hugging Face library (see core/env.py)
