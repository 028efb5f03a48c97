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
from ui.components import device_inputs, follow_job, get_client, schema_form

PAGE = {"title": "M3-JEPA", "icon": ":material/join_inner:", "section": "Methods", "order": 68}
STUDY = "m3_jepa.study"
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
    with st.form("m3-retrieve"):
        caption = st.text_input("Caption", value="a bold seven leaning to the left", max_chars=200, key="m3-caption")
        k = st.slider("Digits to show", 1, 32, 8, key="m3-k")
        device = device_inputs("m3-retrieve")
        go = st.form_submit_button("Find digits", type="primary")
    if go:
        if not caption.strip():
            st.error("Type a caption first.")
        else:
            try:
                st.session_state["m3_retrieve_job"] = client.post(
                    "/v1/m3_jepa/retrieve", json={"caption": caption, "k": k, **device}
                )["id"]
            except ApiError as exc:
                st.error(f"Rejected ({exc.status}): {exc.detail}")
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
        st.error(f"Cannot list methods ({exc.status}): {exc.detail}")
        return
    if spec is None:
        st.error(f"The API has no {STUDY} method.")
        return
    fields = schema_form(spec["params_schema"], key="m3", columns=3, submit_label="Run study")
    if fields is not None:
        try:
            st.session_state["m3_study_job"] = client.post("/v1/m3_jepa/study", json=fields)["id"]
        except ApiError as exc:
            st.error(f"Rejected ({exc.status}): {exc.detail}")
    with st.expander("Variants and the paper's claims"):
        try:
            st.dataframe(client.get("/v1/m3_jepa/variants"), hide_index=True)
            st.dataframe(client.get("/v1/m3_jepa/paper"), hide_index=True)
        except ApiError as exc:
            st.error(f"{exc.status}: {exc.detail}")
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
