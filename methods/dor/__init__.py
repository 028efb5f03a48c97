"""DOR (ICML 2025): Dynamic Outlier Regularization for calibrated prompt tuning, on the methods.vlm substrate."""
