"""DEFAME fact-check page: claim + images in, stages streaming, verdict, evidence cards, the full document.

Talks to the API only: ``POST /v1/factcheck`` to submit, ``GET /v1/jobs/{id}`` while
it runs (each finished stage shows up as the job's message), ``GET
/v1/jobs/{id}/report`` for the result. A finished check can be opened directly
with ``?job=<id>``.
"""

from __future__ import annotations

import datetime as dt
import io
import re
from typing import Any

import streamlit as st

from ui.client import ApiError
from ui.components import get_client

PAGE = {"title": "Fact-check (DEFAME)", "icon": ":material/fact_check:", "section": "Agents", "order": 10}
_IMG = re.compile(r"!\[([^\]]*)\]\(artifact:([^)]+)\)")
_REF = re.compile(r"<image:(\d+)>")
_COLORS = {"SUPPORTED": "green", "REFUTED": "red", "NEI": "orange", "CONFLICTING": "violet",
           "CHERRY_PICKING": "violet", "OUT_OF_CONTEXT": "red", "REFUSED": "gray"}


def _submit(client, claim: str, files: list, date: dt.date | None, author: str) -> None:
    data: dict[str, Any] = {"claim": claim}
    if date:
        data["date"] = date.isoformat()
    if author.strip():
        data["author"] = author.strip()
    uploads = [("images", (f.name, f.getvalue(), f.type or "application/octet-stream")) for f in files]
    try:
        job = client.post("/v1/factcheck", data=data, files=uploads or None)
    except ApiError as exc:
        st.error(f"Rejected ({exc.status}): {exc.detail}")
        return
    st.session_state["defame_job"] = job["id"]
    st.session_state["defame_log"] = []


def _markdown_with_images(client, text: str, artifacts: dict[str, dict[str, Any]]) -> None:
    pos = 0
    for m in _IMG.finditer(text):
        if text[pos:m.start()].strip():
            st.markdown(text[pos:m.start()])
        ref = artifacts.get(m.group(2))
        if ref and ref.get("id"):
            st.image(io.BytesIO(client.artifact(ref["id"])), caption=m.group(1), width=420)
        pos = m.end()
    if text[pos:].strip():
        st.markdown(text[pos:])


def _result(client, job_id: str) -> None:
    rep = client.report(job_id)
    body = rep["body"]
    data = body.get("data") or {}
    artifacts = {a["name"]: a for a in body.get("artifacts", [])}
    name = data.get("verdict_name", "REFUSED")
    st.markdown(f"## Verdict: :{_COLORS.get(name, 'blue')}[{name}]")
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
                st.caption(f"[{src.get('title') or src['url']}]({src['url']})" + (
                    f" · {src['date']}" if src.get("date") else ""))
    st.subheader("Fact-checking document")
    doc = next((s["markdown"] for s in body.get("sections", []) if s["title"] == "Fact-checking document"), "")
    _markdown_with_images(client, doc, artifacts)
    with st.expander("Per-stage usage"):
        usage = data.get("usage") or {}
        st.table({stage: {k: v for k, v in row.items()} for stage, row in usage.items()})


@st.fragment(run_every=2)
def _follow(client, job_id: str) -> None:
    try:
        job = client.job(job_id)
    except ApiError as exc:
        st.error(f"Cannot read job {job_id}: {exc.detail}")
        return
    log: list[str] = st.session_state.setdefault("defame_log", [])
    msg = job.get("message") or ""
    if msg and (not log or log[-1] != msg):
        log.append(msg)
    if job["status"] in ("queued", "running"):
        st.progress(float(job.get("progress") or 0.0), text=f"{job['status']}: {msg}")
        for line in log:
            st.caption(f"✓ {line}")
        return
    if job["status"] != "succeeded":
        st.error(f"Job {job['status']}: {job.get('error') or msg}")
        return
    _result(client, job_id)


def render() -> None:
    st.title("Fact-check a claim")
    st.caption("DEFAME: plan → execute → summarize → develop → judge, up to 3 rounds, then a justification. "
               "The default local model is text-only; images reach it through OCR, EXIF and reverse-search text.")
    client = get_client()
    job_param = st.query_params.get("job")
    if job_param and st.session_state.get("defame_job") != job_param:
        st.session_state["defame_job"] = job_param
        st.session_state["defame_log"] = []
    with st.form("defame-form"):
        claim = st.text_area("Claim", placeholder="The image shows the Sahara in 2023 covered with snow!")
        files = st.file_uploader("Images", type=["png", "jpg", "jpeg", "webp", "gif", "bmp"],
                                 accept_multiple_files=True)
        c1, c2 = st.columns(2)
        date = c1.date_input("Claim date", value=None)
        author = c2.text_input("Author")
        if st.form_submit_button("Check claim", type="primary"):
            if not claim.strip():
                st.error("Enter a claim.")
            else:
                _submit(client, claim, files or [], date, author)
    job_id = st.session_state.get("defame_job")
    if job_id:
        st.divider()
        _follow(client, job_id)
