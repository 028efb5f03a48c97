"""MultiCogEval (Zhou et al., ICML 2025): medical LLMs graded at three cognitive levels on the same knowledge.

Low (MCQ) and mid (statement verification, answer existence, mistake rectification) levels are
few-shot runs over the MedQA / MedMCQA items; the high level is an interactive diagnosis
simulator whose graph lives in ``agents/medcog`` (this package holds its environment and metric).
"""
