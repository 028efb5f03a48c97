"""The vector store (Chroma): evidence collections, demonstration pools, page memory."""

from core.vectorstore.store import Hit, VectorStore, collection_name, get_vectorstore, make_client

__all__ = ["Hit", "VectorStore", "collection_name", "get_vectorstore", "make_client"]
