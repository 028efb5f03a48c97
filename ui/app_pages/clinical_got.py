"""Clinical Graph-of-Thoughts page: pick a synthetic HIE case, see its slice triples (ADC, Z-map with the lesion
in blue, ROI atlas), run it through the graph (or the direct baseline, optionally with oracle nodes), and see the
graph drawn with each node's answer, the per-node trace (prompt and answer) beside the ground truth, and the six
task metrics of a benchmark run.

Talks to the API only: ``GET /v1/clinical/cases``, ``GET /v1/clinical/cases/{id}``, the slice PNGs at
``GET /v1/clinical/cases/{id}/slices/{k}/{kind}``, ``POST /v1/clinical/trace`` and ``POST /v1/clinical/runs``
(jobs), ``GET /v1/jobs/{id}/report``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from ui.client import ApiError
from ui.components import (
    follow_job,
    get_client,
    method_schema,
    schema_inputs,
    show_api_error,
    submit_button,
    submit_job,
)

PAGE = {"title": "Clinical graph of thoughts", "icon": ":material/neurology:", "section": "Agents", "order": 30}
_TRACE = "clinical_got_trace_job"
_RUN = "clinical_got_run_job"
NODES = ["n1", "n2", "n2_5", "n3", "n4", "n5"]
CASE, RUN = "clinical_got.case", "clinical_got.run"
LABELS = {
    "n_cases": "Benchmark size",
    "seed": "Seed",
    "mode": "Graph",
    "model": "Model (empty = the configured one)",
    "oracle_nodes": "Oracle nodes (ground truth)",
}


def _slices(client, case_id: str, detail: dict[str, Any], n_cases: int, seed: int) -> None:
    ks = detail["slices"]
    k = st.select_slider("Slice", options=ks, value=ks[len(ks) // 2], key="cgot-slice")
    cols = st.columns(3)
    for col, kind, title in zip(cols, ("adc", "zmap", "roi"), ("Slice", "ZMAP Slice", "ROI Slice"), strict=True):
        try:
            png = client.get_bytes(f"/v1/clinical/cases/{case_id}/slices/{k}/{kind}?n_cases={n_cases}&seed={seed}")
        except ApiError as exc:
            col.error(f"{kind}: {exc.message}")
            continue
        col.image(png, caption=f"{title} {k}", width="stretch")


def _truth(detail: dict[str, Any]) -> None:
    t = detail["truth"]
    st.markdown(
        f"**Ground truth** — grade level{t['grade']} ({100 * t['lesion_p']:.2f}% of the brain), score {t['score']}, "
        f"2-year outcome {'adverse' if t['outcome'] else 'normal'} (P(adverse) = {t['p_adverse']:.2f}), "
        f"pattern *{t['pattern']}*; injured ROIs {t['injured'] or 'none'}; uncommon {t['uncommon'] or 'none'}."
    )
    with st.expander("What a text-only model reads (the visual-findings adapter)"):
        st.text(detail["findings"])


def _trace(client, job_id: str) -> None:
    try:
        body = client.report(job_id)["body"]
    except ApiError as exc:
        st.info(f"No report yet: {exc.message}")
        return
    data = body.get("data") or {}
    st.subheader(body.get("title", "Trace"))
    st.markdown(body.get("summary", ""))
    if data.get("dot"):
        st.graphviz_chart(data["dot"], width="stretch")
    truth = data.get("truth") or {}
    gold = {
        "n1": f"level{truth.get('grade')}, {truth.get('lesion_p', 0):.4f}",
        "n2": str(truth.get("injured")),
        "n2_5": str(truth.get("uncommon")),
        "n3": f"Score {truth.get('score')}",
        "n4": str(truth.get("outcome")),
        "n5": truth.get("caption", ""),
    }
    rows = []
    for n in NODES:
        a = (data.get("answers") or {}).get(n) or {}
        rows.append(
            {
                "node": n,
                "source": a.get("source"),
                "answer": a.get("answer"),
                "truth": gold[n],
                "seconds": a.get("seconds"),
            }
        )
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    for n in NODES:
        a = (data.get("answers") or {}).get(n) or {}
        if a.get("prompt"):
            with st.expander(f"{n}: prompt sent"):
                st.text(a["prompt"][:12000])


def _metrics(client, job_id: str) -> None:
    try:
        body = client.report(job_id)["body"]
    except ApiError as exc:
        st.info(f"No report yet: {exc.message}")
        return
    st.subheader(body.get("title", "Run"))
    st.markdown(body.get("summary", ""))
    for t in body.get("tables", []):
        st.markdown(f"**{t['title']}**")
        st.dataframe(pd.DataFrame(t["rows"], columns=t["columns"]), hide_index=True, width="stretch")


def render() -> None:
    st.title("Clinical Graph-of-Thoughts (HIE MRI reasoning)")
    st.caption(
        "N1 lesion grading → N3 score → N4 2-year outcome, with N2 anatomy, N2.5 rare locations and the N5 summary. "
        "Cases are a seeded **synthetic stand-in** for the HIE-Reasoning MRI (the real data are under a data-use "
        "agreement)."
    )
    client = get_client()
    case_schema, run_schema = method_schema(client, CASE), method_schema(client, RUN)
    if case_schema is None or run_schema is None:
        return
    bench = schema_inputs(case_schema, "cgot-bench", only=["n_cases", "seed"], labels=LABELS, columns=2)
    if bench.errors:
        return
    n_cases, seed = bench.params["n_cases"], bench.params["seed"]
    try:
        cases = client.get("/v1/clinical/cases", n_cases=n_cases, seed=seed, limit=min(n_cases, 50))
    except ApiError as exc:
        show_api_error(exc, what="Cannot list cases")
        return
    st.dataframe(pd.DataFrame(cases), hide_index=True, width="stretch", height=200)
    case_id = st.selectbox("Case", [c["case_id"] for c in cases], key="cgot-case")
    detail = client.get(f"/v1/clinical/cases/{case_id}", n_cases=n_cases, seed=seed)
    _slices(client, case_id, detail, n_cases, seed)
    _truth(detail)

    st.divider()
    st.subheader("Run the graph")
    graph = schema_inputs(
        case_schema,
        "cgot",
        only=["mode", "model", "oracle_nodes"],
        more=True,
        labels=LABELS,
        columns=3,
        fixed={"case_id": case_id, "n_cases": n_cases, "seed": seed, "run_id": None},
    )
    b1, b2 = st.columns(2)
    with b1:
        if submit_button("Trace this case", "cgot-trace", graph.errors):
            job_id = submit_job(client, CASE, graph.params, path="/v1/clinical/trace", schema=case_schema)
            if job_id:
                st.session_state[_TRACE] = job_id
    with b2:
        shared = {k: v for k, v in graph.params.items() if k in run_schema["properties"] and k != "n_cases"}
        run = schema_inputs(run_schema, "cgot-run", only=["n_cases"], labels={"n_cases": "Cases for a benchmark run"},
                            fixed=shared)  # fmt: skip
        if submit_button("Run the benchmark arm", "cgot-run-go", graph.errors + run.errors, primary=False):
            job_id = submit_job(client, RUN, run.params, path="/v1/clinical/runs", schema=run_schema)
            if job_id:
                st.session_state[_RUN] = job_id
    if st.session_state.get(_TRACE):
        job = follow_job(client, st.session_state[_TRACE], label="trace", log=True)
        if job and job["status"] == "succeeded":
            _trace(client, job["id"])
    if st.session_state.get(_RUN):
        job = follow_job(client, st.session_state[_RUN], label="benchmark run", log=True)
        if job and job["status"] == "succeeded":
            _metrics(client, job["id"])
