"""Home: health, getting started (one-click examples), a job form generated from the parameter schema, jobs, reports."""

from __future__ import annotations

import uuid

import streamlit as st

from ui.client import ApiError
from ui.components import SchemaError, follow_job, get_client, jobs_table, render_report, schema_form, show_api_error

PAGE = {"title": "Home", "icon": ":material/home:", "section": "Platform", "order": 0, "default": True}


def _health(client) -> None:
    ready = client.ready()
    cols = st.columns(4)
    cols[0].metric("API", "ready" if ready.get("status") == "ok" else "unavailable")
    for col, (name, state) in zip(cols[1:], (ready.get("checks") or {}).items()):
        col.metric(name, "ok" if state == "ok" else "error", help=None if state == "ok" else state)
    if ready.get("llm_model"):
        st.caption(f"LLM: {ready['llm_model']} · database: {ready.get('database')}")


@st.fragment(run_every=2)
def _live_jobs(client) -> None:
    jobs = jobs_table(client, limit=15)
    if jobs:
        ids = [j["id"] for j in jobs]
        labels = {j["id"]: f"{j['method']} · {j['status']} · {j['id'][:8]}" for j in jobs}
        cur = st.session_state.get("selected_job")
        idx = ids.index(cur) if cur in ids else 0
        sel = st.selectbox("Show report of", ids, index=idx, format_func=labels.get, key="job-picker")
        if sel != cur:
            st.session_state["selected_job"] = sel
            st.rerun()


def render() -> None:
    st.title("paperworks")
    st.caption(
        "ICML 2025 methods as jobs, reports and agents — offline on a laptop, on GPU workers when you have them."
    )
    client = get_client()
    _health(client)
    try:
        methods = client.methods()
    except ApiError as exc:
        st.error(f"Cannot reach the API: {exc}")
        return
    _getting_started(client)
    left, right = st.columns([2, 3])
    with left:
        st.subheader("Run a method")
        names = [m["name"] for m in methods]
        default = names.index("llm.complete") if "llm.complete" in names else 0
        name = st.selectbox("Method", names, index=default, key="method-picker")
        spec = next(m for m in methods if m["name"] == name)
        st.caption(spec["description"] + f" · queue `{spec['queue']}`")
        try:
            params = schema_form(spec["params_schema"], key=name, client=client, method=name)
        except SchemaError as exc:
            st.error(f"No form for {name}: {exc}")
            params = None
        if params is not None:
            try:
                job = client.submit(name, params, idempotency_key=uuid.uuid4().hex)
                st.session_state["selected_job"] = job["id"]
                st.session_state["last_submitted"] = job["id"]
                st.success(f"Submitted job {job['id'][:8]}")
            except ApiError as exc:
                show_api_error(exc, schema=spec["params_schema"])
        with st.expander(f"All {len(methods)} methods"):
            for m in methods:
                st.markdown(f"- **{m['name']}** ({m['queue']}): {m['description']}")
    with right:
        st.subheader("Jobs")
        _live_jobs(client)
    job_id = st.session_state.get("selected_job")
    if job_id:
        st.divider()
        _report_panel(client, job_id)


def _getting_started(client) -> None:
    """One small example per method that needs no data set: one click runs it here, `paperworks try NAME` there."""
    try:
        examples = client.examples()
    except ApiError:
        return
    if not examples:
        return
    methods = sorted({ex["paper"] for ex in examples if ex.get("paper")})
    with st.expander(f"Getting started: one example for each of the {len(methods)} methods", expanded=True):
        st.caption(
            "Each runs as a job on the worker in under a minute on a 2-core CPU; its progress and report appear "
            "below. From a terminal: `paperworks examples` lists them, `paperworks try NAME` runs one."
        )
        per_row = 3
        for start in range(0, len(examples), per_row):
            cols = st.columns(per_row)
            for col, ex in zip(cols, examples[start : start + per_row]):
                with col.container(border=True):
                    who = f"{ex['paper']} · " if ex.get("paper") else ""
                    first = f" (first run: +{ex['first_use']} s, trains its model)" if ex.get("first_use") else ""
                    st.markdown(f"**{ex['title']}**  \n{who}`{ex['method']}` · about {ex['seconds']} s{first}")
                    st.caption(ex["about"])
                    st.code(f"paperworks try {ex['name']}", language="bash")
                    if st.button("Run it", key=f"try-{ex['name']}"):
                        try:
                            job = client.submit(ex["method"], ex["params"], idempotency_key=uuid.uuid4().hex)
                            st.session_state["selected_job"] = job["id"]
                            st.session_state["last_submitted"] = job["id"]
                        except ApiError as exc:
                            show_api_error(exc)


def _report_panel(client, job_id: str) -> None:
    try:
        job = client.job(job_id)
    except ApiError as exc:
        st.warning(str(exc))
        return
    st.markdown(f"### Job `{job_id[:8]}` — {job['method']} — **{job['status']}**")
    final = follow_job(client, job_id, cancel="Cancel job", interval=1.5)
    if final is not None and final["status"] == "succeeded":
        render_report(client, job_id)
