"""One module per fact-checking stage: plan, execute, summarize, develop, judge (predict), justify."""
