"""DEFAME's tools: search backends and filters, image tools, and the action registry (``registry.py``)."""
