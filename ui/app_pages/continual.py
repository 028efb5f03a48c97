"""Continual-learning page: pick a harness method, seeds and samples per class; watch tasks complete;
compare the accuracy matrices and the old/new accuracy gap of every evaluated arm.

Talks to the API only: ``GET /v1/continual/methods`` and ``/datasets`` for the pickers,
``POST /v1/jobs`` (``continual.run``) to submit, ``GET /v1/jobs/{id}`` while it runs (every
finished task is the job's message), ``GET /v1/jobs/{id}/report`` for the results. A finished run
can be opened directly with ``?job=<id>``.
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from ui.client import ApiError
from ui.components import (
    BLANK,
    follow_job,
    get_client,
    matrix_frame,
    method_schema,
    schema_inputs,
    submit_button,
    submit_job,
)

PAGE = {"title": "Continual learning", "icon": ":material/stacked_line_chart:", "section": "Methods", "order": 40}
_STATE_JOB = "continual_job"
METHOD = "continual.run"


def _pct(pair: list[float] | None) -> str:
    if not pair or pair[0] is None or np.isnan(pair[0]):
        return "n/a"
    return f"{pair[0] * 100:.1f} ± {pair[1] * 100:.1f}"


def _form(client, methods: list[dict[str, Any]], datasets: list[str]) -> None:
    """The method and its preset (named option sets: a schema cannot list them) and the dataset picked here;
    every other input from the ``continual.run`` params schema."""
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    by_name = {m["name"]: m for m in methods}
    c1, c2, c3 = st.columns(3)
    name = c1.selectbox("Method", list(by_name), help="Registered continual-learning methods.", key="continual-method")
    spec = by_name[name]
    presets = list(spec.get("presets") or {}) or ["defaults"]
    preset = c2.selectbox("Preset", presets, help="Named option sets of the method (quick = seconds).")
    default_ds = schema["properties"].get("dataset", {}).get("default")
    ds_list = datasets or [default_ds or "digits"]
    dataset = c3.selectbox(
        "Dataset", ds_list, index=ds_list.index(default_ds) if default_ds in ds_list else 0, key="continual-dataset"
    )
    st.caption(spec.get("description", "") + "  \nEvaluated arms: " + ", ".join(spec.get("heads", [])))
    options_text = st.text_area(
        "Options (JSON)",
        key=f"continual-opts-{name}-{preset}",
        height=120,
        value=json.dumps((spec.get("presets") or {}).get(preset, {}), indent=1),
        help="The method's own options: the preset's, editable.",
    )
    form = schema_inputs(
        schema,
        "continual",
        only=["seeds", "classes_per_task", "n_tasks", "samples_per_class"],
        more=True,
        columns=4,
        fixed={"method": name, "dataset": dataset, "options": {}},
    )
    errors = list(form.errors)
    try:
        options = json.loads(options_text or "{}")
    except json.JSONDecodeError as exc:
        st.error(f"Options: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}).")
        errors.append("Options: not valid JSON.")
        options = {}
    params = {**form.params, "options": options}
    if submit_button("Run", "continual-go", errors):
        job_id = submit_job(client, METHOD, params, schema=schema)
        if job_id:
            st.session_state[_STATE_JOB] = job_id


def _mean_matrix(runs: list[dict[str, Any]], head: str) -> np.ndarray:
    mats = np.array([r["matrices"][head] for r in runs], dtype=float)
    with np.errstate(all="ignore"):
        counts = np.sum(~np.isnan(mats), axis=0)
        total = np.nansum(mats, axis=0)
        return np.where(counts > 0, total / np.maximum(counts, 1), np.nan)


def _results(client, job_id: str) -> None:
    rep = client.report(job_id)
    body = rep["body"]
    exp = (body.get("data") or {}).get("experiment")
    if not exp:
        st.warning("This job's report has no continual-learning results.")
        return
    st.subheader(body.get("title", "Results"))
    st.markdown(body.get("summary", ""))
    agg, heads = exp["aggregate"], exp["heads"]
    rows = [
        {
            "arm": h,
            "A_f (%)": _pct(agg[h]["A_f"]),
            "Ā (%)": _pct(agg[h]["A_bar"]),
            "forgetting (%)": _pct(agg[h]["forgetting"]),
            "old acc (%)": _pct(agg[h]["old_acc"]),
            "new acc (%)": _pct(agg[h]["new_acc"]),
            "new−old gap (%)": _pct(agg[h]["gap"]),
        }
        for h in heads
    ]
    st.table(pd.DataFrame(rows).set_index("arm"))
    st.caption(f"{len(exp['runs'])} seed(s): {[r['seed'] for r in exp['runs']]}; mean ± std over seeds.")

    st.markdown("#### Old vs new classes after the last task")
    gap = pd.DataFrame(
        {
            "old classes": [agg[h]["old_acc"][0] * 100 for h in heads],
            "new classes": [agg[h]["new_acc"][0] * 100 for h in heads],
        },
        index=heads,
    )
    st.bar_chart(gap, stack=False, y_label="accuracy (%)")

    st.markdown("#### Accuracy matrices (rows: after task t, columns: task j)")
    arts = {a["name"]: a for a in body.get("artifacts", [])}
    for name in ("run_matrix.png", "run_curves.png"):
        ref = arts.get(name)
        if ref and ref.get("id"):
            st.image(io.BytesIO(client.artifact(ref["id"])), caption=ref.get("caption") or name)
    head = st.selectbox("Matrix of arm", heads, key=f"continual-head-{job_id}")
    mat = _mean_matrix(exp["runs"], head) * 100
    labels = [f"task {i + 1}" for i in range(mat.shape[0])]
    st.dataframe(matrix_frame(mat.tolist(), [f"after {x}" for x in labels], labels))
    st.caption("— : a task not learnt yet when the row's accuracies were measured.")
    with st.expander("Per-task diagnostics (seed 1)"):
        st.dataframe(pd.DataFrame(exp["runs"][0]["diagnostics"]).astype(object).where(lambda d: d.notna(), BLANK))
    st.download_button(
        "Download all runs (JSON)",
        data=json.dumps(exp, indent=1),
        file_name="continual.json",
        mime="application/json",
        key=f"continual-dl-{job_id}",
    )


def render() -> None:
    st.title("Class-incremental learning")
    st.caption(
        "Exemplar-free class-incremental runs on the shared harness: tasks of new classes arrive one after "
        "another, old data is never stored; every arm is scored on all classes seen so far."
    )
    client = get_client()
    try:
        methods = client.get("/v1/continual/methods")
        datasets = client.get("/v1/continual/datasets")
    except ApiError as exc:
        st.error(f"API unavailable: {exc.message}")
        return
    if not methods:
        st.info("No continual method is registered.")
        return
    job_param = st.query_params.get("job")
    if job_param and st.session_state.get(_STATE_JOB) != job_param:
        st.session_state[_STATE_JOB] = job_param
    _form(client, methods, datasets)
    job_id = st.session_state.get(_STATE_JOB)
    if job_id:
        st.divider()
        job = follow_job(client, job_id, cancel="Cancel run", log=lambda msg: "task" in msg)
        if job is not None and job["status"] == "succeeded":
            _results(client, job_id)
