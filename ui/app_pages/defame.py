"""DEFAME fact-check page: claim + images in, stages streaming, verdict, evidence cards, the full document.

Talks to the API only: ``POST /v1/factcheck`` to submit, ``GET /v1/jobs/{id}`` while
it runs (each finished stage shows up as the job's message), ``GET
/v1/jobs/{id}/report`` for the result. A finished check can be opened directly
with ``?job=<id>``.
"""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

from ui.client import ApiError
from ui.components import (
    follow_job,
    get_client,
    markdown_with_images,
    method_schema,
    schema_inputs,
    show_api_error,
    submit_button,
)

PAGE = {"title": "Fact-check (DEFAME)", "icon": ":material/fact_check:", "section": "Agents", "order": 10}
_REF = re.compile(r"<image:(\d+)>")
METHOD = "defame.check"
LABELS = {"claim": "Claim", "date": "Claim date (YYYY-MM-DD)", "author": "Author", "max_iterations": "Rounds"}
_COLORS = {
    "SUPPORTED": "green",
    "REFUTED": "red",
    "NEI": "orange",
    "CONFLICTING": "violet",
    "CHERRY_PICKING": "violet",
    "OUT_OF_CONTEXT": "red",
    "REFUSED": "gray",
}


def _submit(client, fields: dict[str, Any], files: list, schema: dict[str, Any]) -> None:
    data = {k: str(v) for k, v in fields.items() if v not in (None, "")}
    uploads = [("images", (f.name, f.getvalue(), f.type or "application/octet-stream")) for f in files]
    try:
        job = client.post("/v1/factcheck", data=data, files=uploads or None)
    except ApiError as exc:
        show_api_error(exc, schema=schema, labels=LABELS)
        return
    st.session_state["defame_job"] = job["id"]


def _result(client, job_id: str) -> None:
    rep = client.report(job_id)
    body = rep["body"]
    data = body.get("data") or {}
    artifacts = {a["name"]: a for a in body.get("artifacts", [])}
    name = data.get("verdict_name", "REFUSED")
    st.markdown(f"## Verdict: :{_COLORS.get(name, 'blue')}[{name}]")
    st.caption(f"Answered by `{data.get('model') or (data.get('config') or {}).get('model') or 'the default model'}`")
    st.markdown(data.get("justification") or "_No justification._")
    cols = st.columns(4)
    cols[0].metric("rounds", data.get("rounds", 0))
    cols[1].metric("LLM calls", data.get("llm_calls", 0))
    cols[2].metric("seconds", f"{data.get('seconds', 0):.1f}")
    cols[3].metric("evidence items", len(data.get("evidence", [])))
    st.subheader("Evidence")
    evidence = data.get("evidence") or []
    if not evidence:
        st.caption("No tool was run.")
    for ev in evidence:
        with st.container(border=True):
            st.markdown(f"**`{ev['action']}`** " + ("" if ev["useful"] else " · _no useful evidence_"))
            if ev.get("summary"):
                st.markdown(_REF.sub(lambda m: f"image {m.group(1)}", ev["summary"]))
            if ev.get("error"):
                st.warning(ev["error"])
            for src in ev.get("sources", []):
                st.caption(
                    f"[{src.get('title') or src['url']}]({src['url']})"
                    + (f" · {src['date']}" if src.get("date") else "")
                )
    st.subheader("Fact-checking document")
    doc = next((s["markdown"] for s in body.get("sections", []) if s["title"] == "Fact-checking document"), "")
    markdown_with_images(client, doc, artifacts, image_width=420)
    with st.expander("Per-stage usage"):
        usage = data.get("usage") or {}
        st.table({stage: {k: v for k, v in row.items()} for stage, row in usage.items()})


def render() -> None:
    st.title("Fact-check a claim")
    st.caption(
        "DEFAME: plan → execute → summarize → develop → judge, up to 3 rounds, then a justification. "
        "The default local model is text-only; images reach it through OCR, EXIF and reverse-search text."
    )
    client = get_client()
    job_param = st.query_params.get("job")
    if job_param and st.session_state.get("defame_job") != job_param:
        st.session_state["defame_job"] = job_param
    from ui.app_pages.evidence import status_box

    status_box(client, "defame-default")  # an empty store is said before the check, with the ways out
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    files = st.file_uploader(
        "Images", type=["png", "jpg", "jpeg", "webp", "gif", "bmp"], accept_multiple_files=True, key="defame-images"
    )
    form = schema_inputs(
        schema,
        "defame",
        only=["claim", "date", "author", "max_iterations", "benchmark", "verdict"],  # what the upload form takes
        labels=LABELS,
        columns=2,
    )
    errors = list(form.errors)
    if not (form.params.get("claim") or "").strip():
        errors.append("Claim: enter the claim to check.")
    if submit_button("Check claim", "defame-go", errors):
        _submit(client, form.params, files or [], schema)
    job_id = st.session_state.get("defame_job")
    if job_id:
        st.divider()
        job = follow_job(client, job_id, log=True)
        if job is not None and job["status"] == "succeeded":
            _result(client, job_id)
