"""DEFAME (ICML 2025): dynamic evidence-based multimodal fact-checking as a LangGraph agent.

Entry points: :func:`agents.defame.experiment.check_claim` (one claim), the graph in
:mod:`agents.defame.graph`, the jobs in :mod:`agents.defame.jobs`.
"""
