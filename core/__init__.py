"""Foundations: config, the LLM gateway, the database, the vector store, jobs and artifacts.

Nothing here imports a method, an agent or an entrypoint (see the layers contract in pyproject.toml).
"""
