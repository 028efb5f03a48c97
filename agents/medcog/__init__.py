"""MultiCogEval's high level as a LangGraph graph: the interactive clinical-decision simulator."""
