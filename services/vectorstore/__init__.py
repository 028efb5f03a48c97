"""The vector store (Chroma): evidence collections, demonstration pools, page memory."""

from services.vectorstore.store import Hit, VectorStore, collection_name, get_vectorstore, make_client

__all__ = ["Hit", "VectorStore", "collection_name", "get_vectorstore", "make_client"]
