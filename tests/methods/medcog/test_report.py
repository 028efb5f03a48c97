"""The generated Reading says which level steps and which model differences are resolved (|Δ| ≥ 2 SE)."""

from methods.medcog.highlevel import HighLevelSummary
from methods.medcog.lowmid import LowMidResult
from methods.medcog.report import ModelResult, reading


def _model(label: str, low: tuple[float, float], mid: tuple[float, float], high: tuple[float, float]) -> ModelResult:
    levels = {"medqa/low": {"norm": low[0], "se": low[1]}, "medqa/mid": {"norm": mid[0], "se": mid[1]}}
    lm = LowMidResult(label, "run", [], levels, 0, 0, 0)
    hi = HighLevelSummary(high[0], high[1], 0.0, 0.0, {}, 1, [0])
    return ModelResult(label, label, "model", lowmid=lm, high=hi)


def test_only_steps_beyond_two_standard_errors_are_called_resolved():
    small = _model("local/smollm2-135m-instruct", (0.05, 0.10), (0.00, 0.10), (0.0, 0.0))
    big = _model("local/qwen", (0.60, 0.05), (0.20, 0.05), (0.10, 0.05))
    text = reading([small, big])
    first, second = text.split("local/qwen: ")[0], text.split("local/qwen: ")[1]
    assert "no step between levels is resolved" in first
    assert "low − mid +0.400 ± 0.071" in second and "mid − high" not in second.split("local/qwen −")[0]
    assert "local/qwen − local/smollm2-135m-instruct: low +0.550 (SE 0.112, resolved), mid +0.200 (SE 0.112)" in text
