"""MultiCogEval page: submit the low/mid levels or the interactive-diagnosis simulator for a model, then see
the chance-normalised score per level with SE bars, the per-task table, the per-disease strict scores and the
transcript of every high-level episode.

Talks to the API only: ``GET /v1/methods`` (the forms come from ``medcog.lowmid`` / ``medcog.high``'s params
schemas), ``POST /v1/jobs``, ``GET /v1/jobs/{id}`` while it runs, ``GET /v1/jobs/{id}/report`` for the results.
"""

from __future__ import annotations

import io
from typing import Any

import pandas as pd
import streamlit as st

from ui.client import ApiError
from ui.components import follow_job, get_client, method_schema, schema_form, show_api_error

PAGE = {"title": "Medical cognitive levels", "icon": ":material/stethoscope:", "section": "Methods", "order": 70}
_STATE_JOB = "medcog_job"
LOWMID_FIELDS = ["model", "datasets", "tasks", "n_items", "repeats", "mode"]
HIGH_FIELDS = ["model", "diseases", "cases_per_disease", "seeds", "max_turns"]


def _submit(client, method: str, params: dict[str, Any]) -> None:
    try:
        job = client.submit(method, params)
    except ApiError as exc:
        show_api_error(exc)
        return
    st.session_state[_STATE_JOB] = job["id"]


def _levels_figure(results: list[dict[str, Any]]):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 3.2))
    ax = fig.add_subplot(1, 1, 1)
    levels = ["low", "mid", "high"]
    width = 0.8 / max(1, len(results))
    for i, r in enumerate(results):
        vals = [(r["levels"].get(k) or {}).get("norm") for k in levels]
        errs = [(r["levels"].get(k) or {}).get("se") or 0 for k in levels]
        xs = [j + i * width for j in range(3)]
        ax.bar(xs, [v if v is not None else float("nan") for v in vals], width, yerr=errs, capsize=3, label=r["label"])
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks([j + width * (len(results) - 1) / 2 for j in range(3)], ["Low", "Mid", "High (strict)"])
    ax.set_ylabel("normalised score")
    ax.legend(fontsize=7)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf


def _results(body: dict[str, Any]) -> None:
    results = (body.get("data") or {}).get("results") or []
    st.subheader(body.get("title", "Results"))
    st.markdown(body.get("summary", ""))
    if not results:
        st.warning("This report has no MultiCogEval results.")
        return
    st.image(_levels_figure(results), caption="Chance-normalised score per level (0 = chance) with SE bars")
    tasks = [
        {
            "model": r["label"],
            "dataset": t["dataset"],
            "task": t["task"],
            "chance": t["chance"],
            "accuracy": t["acc"],
            "± SE": t["acc_se"],
            "normalised": t["norm"],
            "± SE (norm)": t["norm_se"],
        }
        for r in results
        for t in r["tasks"]
    ]
    if tasks:
        st.markdown("**Per task**")
        st.dataframe(pd.DataFrame(tasks), hide_index=True, width="stretch")
    diseases = [
        {"model": r["label"], "disease": d, **v}
        for r in results
        if r.get("high")
        for d, v in r["high"]["per_disease"].items()
    ]
    if diseases:
        st.markdown("**High level per disease** (strict = correct diagnosis × mean exam recall)")
        st.dataframe(pd.DataFrame(diseases), hide_index=True, width="stretch")
    episodes = [(r["label"], e) for r in results for e in r.get("episodes", [])]
    if episodes:
        labels = [
            f"{lab}: {e['case_id']} ({'✓' if e['correct'] else '✗'}, strict {e['strict']:.2f})" for lab, e in episodes
        ]
        pick = st.selectbox("Episode", range(len(labels)), format_func=lambda i: labels[i], key="medcog-episode")
        lab, e = episodes[pick]
        st.caption(
            f"actions {', '.join(e['actions']) or 'none'} · recalls {e['recalls']} · diagnosis: {e['diagnosis'] or '—'}"
        )
        for m in e["transcript"]:
            with st.chat_message("assistant" if m["role"] == "assistant" else "user"):
                st.text(m["content"][:2000])


def render() -> None:
    st.title("MultiCogEval: low → mid → high cognitive levels")
    st.caption(
        "Low: multiple-choice recall. Mid: statement verification, answer existence, mistake rectification on the "
        "same questions. High: an interactive work-up of a (synthetic) patient ending in a diagnosis."
    )
    client = get_client()
    job_id = st.query_params.get("job") or st.session_state.get(_STATE_JOB)
    low_tab, high_tab = st.tabs(["Low / mid levels", "High level (simulator)"])
    with low_tab:
        schema = method_schema(client, "medcog.lowmid")
        if schema:
            params = schema_form(schema, key="medcog-lowmid", only=LOWMID_FIELDS, columns=3, submit_label="Evaluate")
            if params is not None:
                _submit(client, "medcog.lowmid", params)
    with high_tab:
        schema = method_schema(client, "medcog.high")
        if schema:
            params = schema_form(schema, key="medcog-high", only=HIGH_FIELDS, columns=3, submit_label="Simulate")
            if params is not None:
                _submit(client, "medcog.high", params)
    job_id = st.session_state.get(_STATE_JOB) or job_id
    if job_id:
        job = follow_job(client, job_id, label="MultiCogEval", cancel="Cancel", log=True)
        if job and job["status"] == "succeeded":
            try:
                _results(client.report(job_id)["body"])
            except ApiError as exc:
                st.error(f"Cannot read the report: {exc.message}")
