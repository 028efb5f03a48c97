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
from ui.components import device_inputs, follow_job, get_client

PAGE = {"title": "Continual learning", "icon": ":material/stacked_line_chart:", "section": "Methods", "order": 40}
_STATE_JOB = "continual_job"


def _pct(pair: list[float] | None) -> str:
    if not pair or pair[0] is None or np.isnan(pair[0]):
        return "n/a"
    return f"{pair[0] * 100:.1f} ± {pair[1] * 100:.1f}"


def _submit(client, params: dict[str, Any]) -> None:
    try:
        job = client.submit("continual.run", params)
    except ApiError as exc:
        st.error(f"Rejected ({exc.status}): {exc.detail}")
        return
    st.session_state[_STATE_JOB] = job["id"]


def _form(client, methods: list[dict[str, Any]], datasets: list[str]) -> None:
    by_name = {m["name"]: m for m in methods}
    c1, c2 = st.columns(2)
    name = c1.selectbox("Method", list(by_name), help="Registered continual-learning methods.")
    spec = by_name[name]
    presets = list(spec.get("presets") or {}) or ["defaults"]
    preset = c2.selectbox("Preset", presets, help="Named option sets of the method (quick = seconds).")
    st.caption(spec.get("description", "") + "  \nEvaluated arms: " + ", ".join(spec.get("heads", [])))
    with st.form("continual-form"):
        c1, c2, c3 = st.columns(3)
        seeds = c1.slider("Seeds", 1, 10, 1, help="Each seed draws its own class order, subsample and init.")
        all_samples = c2.checkbox("All training samples", value=True)
        spc = c2.number_input(
            "Samples per class",
            min_value=2,
            max_value=100000,
            value=32,
            step=1,
            help="Used when 'All training samples' is off (e.g. 32 < d for DPCR's CIP).",
        )
        dataset = c3.selectbox("Dataset", datasets or ["digits"])
        c1, c2 = st.columns(2)
        per_task = c1.number_input("Classes per task", min_value=1, max_value=1000, value=2, step=1)
        n_tasks = c2.number_input("Tasks (0 = all)", min_value=0, max_value=1000, value=0, step=1)
        options_text = st.text_area(
            "Options (JSON)",
            key=f"continual-opts-{name}-{preset}",
            height=120,
            value=json.dumps((spec.get("presets") or {}).get(preset, {}), indent=1),
        )
        device = device_inputs("continual")
        if st.form_submit_button("Run", type="primary"):
            try:
                options = json.loads(options_text or "{}")
            except json.JSONDecodeError as exc:
                st.error(f"Options are not valid JSON: {exc}")
                return
            params = {
                "method": name,
                "dataset": dataset,
                "seeds": int(seeds),
                "options": options,
                "classes_per_task": int(per_task),
                **device,
            }
            if not all_samples:
                params["samples_per_class"] = int(spc)
            if n_tasks:
                params["n_tasks"] = int(n_tasks)
            _submit(client, params)


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
    st.dataframe(pd.DataFrame(mat, index=[f"after {x}" for x in labels], columns=labels).round(1))
    with st.expander("Per-task diagnostics (seed 1)"):
        st.dataframe(pd.DataFrame(exp["runs"][0]["diagnostics"]))
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
        st.error(f"API unavailable: {exc.detail}")
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
