"""M3-JEPA page: type a caption and see the nearest digits (with the caption's expert routing), and run the
variant study (recall per variant, expert-usage heatmap, §7 checks).

Talks to the API only: ``POST /v1/m3_jepa/retrieve``, ``POST /v1/m3_jepa/study``, the jobs' reports and
artifacts, ``GET /v1/m3_jepa/variants`` and ``GET /v1/m3_jepa/paper``.
"""

from __future__ import annotations

import io
from typing import Any

import streamlit as st

from ui.client import ApiError
from ui.components import (
    follow_job,
    get_client,
    method_schema,
    schema_form,
    schema_inputs,
    submit_button,
    submit_job,
)

PAGE = {"title": "M3-JEPA", "icon": ":material/join_inner:", "section": "Methods", "order": 68}
STUDY, RETRIEVE = "m3_jepa.study", "m3_jepa.retrieve"
LABELS = {"caption": "Caption", "k": "Digits to show"}
PLOTS = {
    "digits.png": "Nearest test digits (digit, ink, slant, cosine)",
    "routing.png": "Which experts each token of the caption is routed to (t→i)",
    "recall.png": "Exact-pair R@1 per variant (mean ± std over seeds)",
    "expert_usage.png": "Expert usage per (direction, branch)",
    "sampling.png": "AGD task sampling from the validation recalls",
}


def _images(client, body: dict[str, Any], names: list[str]) -> None:
    for a in body.get("artifacts", []):
        if a["name"] in names and a.get("id"):
            st.image(io.BytesIO(client.artifact(a["id"])), caption=PLOTS.get(a["name"], a["name"]))


def _tables(body: dict[str, Any]) -> None:
    import pandas as pd

    for t in body.get("tables", []):
        st.markdown(f"**{t['title']}**")
        st.dataframe(pd.DataFrame(t["rows"], columns=t["columns"]), hide_index=True)
        if t.get("note"):
            st.caption(t["note"])


def _retrieval(client) -> None:
    st.subheader("Retrieval demo")
    schema = method_schema(client, RETRIEVE)
    if schema is None:
        return
    st.session_state.setdefault("m3-retrieve-caption", "a bold seven leaning to the left")  # the schema has none
    form = schema_inputs(schema, "m3-retrieve", only=["caption", "k"], more=True, labels=LABELS, columns=2)
    errors = list(form.errors)
    if not (form.params.get("caption") or "").strip():
        errors.append("Caption: type a caption first.")
    if submit_button("Find digits", "m3-retrieve-go", errors):
        job_id = submit_job(client, RETRIEVE, form.params, path="/v1/m3_jepa/retrieve", schema=schema)
        if job_id:
            st.session_state["m3_retrieve_job"] = job_id
    job_id = st.session_state.get("m3_retrieve_job")
    if job_id:
        job = follow_job(client, job_id, label="Retrieval", cancel="Cancel")
        if job is not None and job["status"] == "succeeded":
            body = client.report(job_id)["body"]
            st.markdown(f"**{body.get('title')}**")
            _images(client, body, ["digits.png", "routing.png"])
            _tables(body)


def _study(client) -> None:
    st.subheader("Variant study")
    try:
        spec = next((m for m in client.methods() if m["name"] == STUDY), None)
    except ApiError as exc:
        st.error(f"Cannot list methods ({exc.status}): {exc.message}")
        return
    if spec is None:
        st.error(f"The API has no {STUDY} method.")
        return
    fields = schema_form(spec["params_schema"], key="m3", columns=3, submit_label="Run study")
    if fields is not None:
        job_id = submit_job(client, STUDY, fields, path="/v1/m3_jepa/study", schema=spec["params_schema"])
        if job_id:
            st.session_state["m3_study_job"] = job_id
    with st.expander("Variants and the paper's claims"):
        try:
            st.dataframe(client.get("/v1/m3_jepa/variants"), hide_index=True)
            st.dataframe(client.get("/v1/m3_jepa/paper"), hide_index=True)
        except ApiError as exc:
            st.error(f"{exc.status}: {exc.message}")
    job_id = st.session_state.get("m3_study_job")
    if job_id:
        job = follow_job(client, job_id, label="Study", cancel="Cancel")
        if job is not None and job["status"] == "succeeded":
            body = client.report(job_id)["body"]
            st.markdown(f"**{body.get('title')}** — {body.get('summary')}")
            _images(client, body, ["recall.png", "expert_usage.png", "sampling.png"])
            _tables(body)
            for s in body.get("sections", []):
                with st.expander(s["title"]):
                    st.markdown(s["markdown"])


def render() -> None:
    st.title("M3-JEPA: multimodal alignment with a multi-gate MoE predictor")
    st.caption(
        "A mixture-of-experts predictor maps frozen SmolLM2 caption states into the frozen digit encoder's latent "
        "space (and back), trained with InfoNCE + SmoothL1 by alternating gradient descent between the directions."
    )
    st.session_state.setdefault("m3_retrieve_job", None)
    st.session_state.setdefault("m3_study_job", None)
    client = get_client()
    _retrieval(client)
    st.divider()
    _study(client)
