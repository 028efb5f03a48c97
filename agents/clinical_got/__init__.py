"""Clinical Graph-of-Thoughts (Bao et al., ICML 2025) over the synthetic HIE-Reasoning stand-in."""
