"""Diagnostic LangGraph graphs (``diag_steps``): known timing, for operators and the platform's fault tests."""
