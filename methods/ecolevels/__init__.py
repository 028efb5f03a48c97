"""EcoLevels (Morehouse, Swaroop & Pan, ICML 2025 position): place every bias probe on two axes — the level
at which bias is probed and its ecological validity for a declared target task — and use the placement to
choose probes, reconcile conflicting results (R1–R4) and predict generalisation. Operational rules are the
spec's reconstruction (``ecolevels.md`` §3); the LangGraph flow lives in ``agents/ecolevels``."""
