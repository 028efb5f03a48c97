"""Reference models that validate the pipeline (spec §7): a perfect oracle and constant answerers.

Both are ``scripted/<name>`` gateway models: the oracle reads the test item at the end of a
few-shot prompt and returns its gold answer in the demo format; the constant model always says
"A" / "true" / "yes" / "correct". The high-level oracle orders every exam with names that map to
the case's records and outputs the gold disease.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from core.llm import scripted
from methods.medcog.data import Dataset, Task, load_task, variants
from methods.medcog.prompts import answer_text

CONSTANT = {"MCQ": "A", "SV": "true", "AE": "yes", "MR": "correct"}


def _gold_table(datasets: list[Dataset], tasks: list[Task], data_dir=None) -> dict[str, tuple[str, str]]:
    table = {}
    for ds in datasets:
        for task in tasks:
            for item in load_task(ds, task, data_dir):
                for v in variants(task, item):
                    table[v.prompt + "\nAnswer:"] = (task, answer_text(task, v.gold))
    return table


def _last_user(messages: list[dict]) -> str:
    return next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")


@contextlib.contextmanager
def lowmid_baselines(datasets: list[Dataset], tasks: list[Task], data_dir=None) -> Iterator[dict[str, str]]:
    """Install ``scripted/medcog-oracle`` and ``scripted/medcog-constant``; yields {label: model}."""
    table = _gold_table(datasets, tasks, data_dir)
    by_tail: dict[str, list[str]] = {}
    for k in table:
        by_tail.setdefault(k[-60:], []).append(k)

    def lookup(prompt: str) -> tuple[str, str]:
        """The gold of the test item the prompt ends with (the longest matching item text)."""
        hits = [k for k in by_tail.get(prompt[-60:], []) if prompt.endswith(k)]
        if not hits:
            raise ValueError("the oracle does not know this item")
        return table[max(hits, key=len)]

    def oracle(messages):
        return " " + lookup(_last_user(messages))[1]

    def constant(messages):
        return " " + CONSTANT[lookup(_last_user(messages))[0]]

    with scripted("medcog-oracle", oracle), scripted("medcog-constant", constant):
        yield {"oracle": "scripted/medcog-oracle", "constant": "scripted/medcog-constant"}


def high_oracle_reply(messages: list[dict], disease: str) -> str:
    """The scripted clinician: PE → LAB (broad panels) → MICRO → IMAGE (every region) → the gold disease."""
    last = _last_user(messages)
    if "List the specific laboratory" in last:
        return (
            "Rationale: broad work-up\nLab Tests: CBC, Comprehensive Metabolic Panel, Liver Function Test, lipase, "
            "CRP, lactate, NTproBNP, troponin T, TSH, HbA1c, INR, Hepatitis C Virus Antibody"
        )
    if "List the specific microbiology" in last:
        return "Rationale: cultures\nMicrobiology tests: blood culture, urine culture"
    if "List the specific imaging" in last:
        return (
            "Rationale: imaging\nImaging scans: chest x-ray, CT abdomen, abdominal ultrasound, CT head, "
            "thyroid ultrasound"
        )
    if "Diagnosis:" in last:
        return f"Diagnosis: {disease}\nTreatment: standard care"
    done = sum(1 for m in messages if m.get("role") == "assistant" and "Action:" in m.get("content", ""))
    return "Rationale: next step\nAction: " + ["PE", "LAB", "MICRO", "IMAGE", "OUTPUT"][min(done, 4)]


def high_rush_reply(messages: list[dict], disease: str) -> str:
    """Outputs the gold disease at once, ordering nothing (strict credit = correctness × 0 recall)."""
    if "Diagnosis:" in _last_user(messages):
        return f"Diagnosis: {disease}\nTreatment: standard care"
    return "Rationale: obvious\nAction: OUTPUT"


@contextlib.contextmanager
def high_baselines(cases) -> Iterator[dict[str, str]]:
    """Install ``scripted/medcog-hi-oracle`` and ``scripted/medcog-hi-rush`` for these cases (the disease is
    looked up from the history in the first user turn); yields {label: model}."""
    by_history = {c.history: c.disease for c in cases}

    def disease_of(messages):
        first = next(m["content"] for m in messages if m.get("role") == "user")
        for h, d in by_history.items():
            if h in first:
                return d
        raise ValueError("unknown case")

    def summary_guard(fn):
        return lambda m: fn(m, disease_of(m))

    with (
        scripted("medcog-hi-oracle", summary_guard(high_oracle_reply)),
        scripted("medcog-hi-rush", summary_guard(high_rush_reply)),
    ):
        yield {"oracle": "scripted/medcog-hi-oracle", "output at once": "scripted/medcog-hi-rush"}
