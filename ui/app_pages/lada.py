"""LADA / X-TAIL page: run LADA or a baseline on the synthetic cross-domain stream and look at the
accuracy matrix — rows are training steps, columns are test domains, the cells above the diagonal
are zero-shot accuracy on domains not learned yet (X-TAIL: every image is classified over the union
of all domains' classes, no domain id).

Talks to the API only: ``GET /v1/lada/domains`` and ``/paper``, ``POST /v1/lada/xtail`` to submit,
``GET /v1/jobs/{id}`` while it runs, ``GET /v1/jobs/{id}/report`` for the results (``?job=<id>`` opens one).
"""

from __future__ import annotations

import io
import json
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ui.client import ApiError
from ui.components import follow_job, get_client, method_schema, schema_form, submit_job

PAGE = {"title": "LADA (X-TAIL)", "icon": ":material/grid_on:", "section": "Methods", "order": 42}
_STATE_JOB = "lada_job"
METHOD = "lada.xtail"
METHODS = {
    "lada": "LADA (memory units + DPT + text adapters)",
    "xtail_zeroshot": "Zero-shot CLIP",
    "xtail_finetune": "Fine-tune (full CLIP)",
    "xtail_lwf": "LwF (full CLIP + KD)",
    "xtail_rail": "Primal-RAIL (ridge adapter)",
}


def _pct(pair: list[float] | None) -> str:
    if not pair or pair[0] is None or np.isnan(pair[0]):
        return "n/a"
    return f"{pair[0] * 100:.1f} ± {pair[1] * 100:.1f}"


def _form(client, domains: list[dict[str, Any]]) -> None:
    """Every input from the ``lada.xtail`` params schema; the domains' order offers the stream's domains."""
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    names = [d["name"] for d in domains]
    order = st.multiselect(
        "Domains in training order",
        names,
        default=[n for n in schema["properties"].get("domains", {}).get("default", names) if n in names],
        key="lada-domains",
        help=schema["properties"].get("domains", {}).get("description"),
    )
    params = schema_form(
        schema,
        "lada",
        only=["method", "preset", "backbone", "seeds", "shots"],
        more=True,
        format_funcs={"method": lambda m: METHODS.get(m, m)},
        columns=3,
        submit_label="Run",
        fixed={"domains": order},
        client=client,
        method=METHOD,
    )
    if params is not None:
        job_id = submit_job(client, METHOD, params, path="/v1/lada/xtail", schema=schema)
        if job_id:
            st.session_state[_STATE_JOB] = job_id


def mean_matrix(runs: list[dict[str, Any]], head: str) -> np.ndarray:
    return np.mean(np.array([r["matrices"][head] for r in runs], dtype=float), axis=0)


def heatmap(mat: np.ndarray, domains: list[str]) -> alt.Chart:
    rows = [
        {
            "after step": f"{t + 1}. {domains[t]}",
            "test domain": domains[d],
            "accuracy (%)": round(float(mat[t, d]) * 100, 1),
            "learned": "learned" if d <= t else "zero-shot",
        }  # fmt: skip
        for t in range(len(domains))
        for d in range(len(domains))
    ]
    df = pd.DataFrame(rows)
    base = alt.Chart(df).encode(
        x=alt.X("test domain:N", sort=domains),
        y=alt.Y("after step:N", sort=[r["after step"] for r in rows[:: len(domains)]]),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("accuracy (%):Q", scale=alt.Scale(domain=[0, 100], scheme="viridis")),
        tooltip=["after step", "test domain", "accuracy (%)", "learned"],
    )
    text = base.mark_text(fontSize=12).encode(text="accuracy (%):Q", color=alt.value("white"))
    return (cells + text).properties(height=60 * len(domains))


def _results(client, job_id: str) -> None:
    body = client.report(job_id)["body"]
    exp = (body.get("data") or {}).get("experiment")
    if not exp:
        st.warning("This job's report has no X-TAIL results.")
        return
    st.subheader(body.get("title", "Results"))
    st.markdown(body.get("summary", ""))
    heads, domains = exp["heads"], exp["domains"]
    for key, caption in (
        ("aggregate", "union label space (X-TAIL)"),
        ("aggregate_per_task", "per-task label space (MTIL)"),
    ):
        agg = exp[key]
        table = pd.DataFrame(
            [
                {
                    "head": h,
                    "Transfer (%)": _pct(agg[h]["transfer"]),
                    "Average (%)": _pct(agg[h]["average"]),
                    "Last (%)": _pct(agg[h]["last"]),
                }
                for h in heads
            ]  # fmt: skip
        ).set_index("head")
        st.markdown(f"**{caption}** — mean ± std over {len(exp['runs'])} seed(s)")
        st.table(table)
    st.markdown("#### Accuracy matrix (rows: after training step t; columns: test domain)")
    head = st.selectbox("Head", heads, key=f"lada-head-{job_id}")
    mat = mean_matrix(exp["runs"], head)
    st.altair_chart(heatmap(mat, domains), width="stretch")
    st.dataframe(pd.DataFrame(mat * 100, index=[f"after {d}" for d in domains], columns=domains).round(1))
    st.caption("Cells above the diagonal: domains not learned yet (zero-shot transfer); Transfer averages them.")
    arts = {a["name"]: a for a in body.get("artifacts", [])}
    ref = arts.get("matrix.png")
    if ref and ref.get("id"):
        st.image(io.BytesIO(client.artifact(ref["id"])), caption=ref.get("caption") or "matrix.png")
    st.download_button("Download all runs (JSON)", data=json.dumps(exp, indent=1), file_name="xtail.json",
                       mime="application/json", key=f"lada-dl-{job_id}")  # fmt: skip


def render() -> None:
    st.title("LADA — label-specific CLIP adapter (X-TAIL)")
    st.caption(
        "Domains arrive one after another; after each, every domain's test images are classified over the union of "
        "all domains' classes (learned or not) with no domain id. Frozen image encoder; LADA adds label-specific "
        "memory units per class and distils old classes from stored GMM prototypes."
    )
    client = get_client()
    try:
        domains = client.get("/v1/lada/domains")
        paper = client.get("/v1/lada/paper")
    except ApiError as exc:
        st.error(f"API unavailable: {exc.message}")
        return
    st.markdown("Stream: " + " → ".join(f"**{d['name']}** ({len(d['classnames'])})" for d in domains))
    with st.expander("Paper numbers (ViT-B/16, real X-TAIL, 16-shot)"):
        st.table(pd.DataFrame(paper).set_index("method"))
    job_param = st.query_params.get("job")
    if job_param and st.session_state.get(_STATE_JOB) != job_param:
        st.session_state[_STATE_JOB] = job_param
    _form(client, domains)
    job_id = st.session_state.get(_STATE_JOB)
    if job_id:
        st.divider()
        job = follow_job(client, job_id, cancel="Cancel run", log=lambda msg: "task" in msg)
        if job is not None and job["status"] == "succeeded":
            _results(client, job_id)
