"""``llm.complete``: batch prompts → completions from the configured model."""
