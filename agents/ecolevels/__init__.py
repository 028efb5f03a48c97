"""EcoLevels' LangGraph flow: target task → select probes → run (fan-out) → classify/score → reconcile → report."""
