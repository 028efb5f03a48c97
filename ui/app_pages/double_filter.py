"""Double-Filter page: see which patches the image patch filter keeps (overlaid on each scene), and run the
experiment to see score against FLOPs and latency per arm and the genetic layer search's fitness curve.

Talks to the API only: ``POST /v1/double_filter/patches``, ``POST /v1/double_filter/experiment``, the jobs'
reports and artifacts, ``GET /v1/double_filter/paper``.
"""

from __future__ import annotations

import io

import streamlit as st

from ui.client import ApiError
from ui.components import follow_job, get_client, method_schema, schema_form, submit_job

PAGE = {"title": "Double-Filter", "icon": ":material/filter_alt:", "section": "Methods", "order": 57}
EXPERIMENT, PATCHES = "double_filter.experiment", "double_filter.patches"
FORM_FIELDS = ["tasks", "seeds", "steps", "rho", "gamma", "population", "generations", "detector"]


def _image(client, body: dict, name: str, caption: str, where=st) -> bool:
    art = next((a for a in body.get("artifacts", []) if a["name"] == name and a.get("id")), None)
    if art is None:
        return False
    where.image(io.BytesIO(client.artifact(art["id"])), caption=caption)
    return True


def _tables(body: dict, where=st, skip: tuple[str, ...] = ()) -> None:
    import pandas as pd

    for t in body.get("tables", []):
        if t["title"].startswith(skip):
            continue
        where.markdown(f"**{t['title']}**")
        where.dataframe(pd.DataFrame(t["rows"], columns=t["columns"]), hide_index=True)
        if t.get("note"):
            where.caption(t["note"])


def _patches(client) -> None:
    st.subheader("Kept patches (IPF)")
    schema = method_schema(client, PATCHES)
    if schema is None:
        return
    params = schema_form(
        schema,
        "df-patches",
        only=["rho", "detector", "start", "count"],
        more=True,
        columns=4,
        submit_label="Filter patches",
        client=client,
        method=PATCHES,
    )
    if params is not None:
        job_id = submit_job(client, PATCHES, params, path="/v1/double_filter/patches", schema=schema)
        if job_id:
            st.session_state["df_patch_job"] = job_id
    job_id = st.session_state.get("df_patch_job")
    if job_id:
        job = follow_job(client, job_id, label="Patch filter")
        if job is not None and job["status"] == "succeeded":
            body = client.report(job_id)["body"]
            st.markdown(body.get("summary", ""))
            left, right = st.columns([2, 3])
            _image(client, body, "kept_patches.png", "left: image + detector boxes; right: kept patches", left)
            _tables(body, right)


def _experiment(client) -> None:
    st.subheader("Accuracy vs FLOPs, and the genetic layer search")
    schema = method_schema(client, EXPERIMENT)
    if schema is None:
        return
    fields = schema_form(
        schema,
        key="df-exp",
        only=FORM_FIELDS,
        columns=4,
        submit_label="Run experiment",
        client=client,
        method=EXPERIMENT,
    )
    if fields is not None:
        job_id = submit_job(client, EXPERIMENT, fields, path="/v1/double_filter/experiment", schema=schema)
        if job_id:
            st.session_state["df_exp_job"] = job_id
    job_id = st.session_state.get("df_exp_job")
    if job_id:
        job = follow_job(client, job_id, label="Experiment", cancel="Cancel", log=True)
        if job is not None and job["status"] == "succeeded":
            body = client.report(job_id)["body"]
            st.markdown(f"**{body.get('title')}** — {body.get('summary')}")
            left, right = st.columns(2)
            _image(client, body, "ga_fitness.png", "GA fitness per generation", left)
            _image(client, body, "score_vs_cost.png", "score vs FLOPs / latency per arm", right)
            _tables(body)
            for s in body.get("sections", []):
                if s["title"] != "Figures":
                    with st.expander(s["title"]):
                        st.markdown(s["markdown"])


def render() -> None:
    st.title("Double-Filter: patch & layer filtering")
    st.caption(
        "Two filters make a vision-language model cheaper: the image patch filter drops background-heavy patches "
        "(foreground from a detector, importance from [CLS] attention, some background kept on purpose) and a "
        "genetic algorithm switches off redundant sub-layers (attention, cross-attention, FFN) for the task. "
        "Here on a tiny two-stream VLP pretrained on synthetic scenes."
    )
    client = get_client()
    st.session_state.setdefault("df_patch_job", None)
    st.session_state.setdefault("df_exp_job", None)
    _patches(client)
    st.divider()
    _experiment(client)
    with st.expander("Paper (METER / ViLT) — context"):
        try:
            st.dataframe(client.get("/v1/double_filter/paper"), hide_index=True)
        except ApiError as exc:
            st.error(f"{exc.status}: {exc.message}")
