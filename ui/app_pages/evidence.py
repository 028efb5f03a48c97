"""Evidence page: what DEFAME can search, and the documents of an evidence corpus (upload, list, delete).

Talks to the API only: ``GET /v1/evidence`` (status and the empty-store warning),
``GET/POST /v1/evidence/documents`` and ``DELETE /v1/evidence/documents/{id}``.
"""

from __future__ import annotations

import streamlit as st

from ui.client import ApiError
from ui.components import get_client, show_api_error

PAGE = {"title": "Evidence (DEFAME)", "icon": ":material/library_books:", "section": "Agents", "order": 11}


def status_box(client, corpus: str) -> dict | None:
    """The evidence status of ``corpus``, shown as a warning with the two ways out when nothing can be found."""
    try:
        ev = client.get("/v1/evidence", corpus=corpus)
    except ApiError as exc:
        st.error(f"Evidence status unavailable ({exc.status}): {exc.message}")
        return None
    if ev.get("warning"):
        st.warning(ev["warning"] + "\n\n" + "\n".join(f"- {w}" for w in ev.get("ways_out", [])))
    else:
        backend = ev["search_backend"] if ev.get("backend_ready") else "none"
        st.caption(
            f"Corpus `{corpus}`: {ev['chunks']} text chunks, {ev['images']} images · web search backend: {backend}"
        )
    return ev


def render() -> None:
    st.title("Evidence")
    st.caption(
        "DEFAME's web_search looks in this corpus (Chroma) unless a search backend (SearxNG, Serper) is configured. "
        "Add the documents a claim should be checked against; from the shell: `paperworks corpus add DIR`."
    )
    client = get_client()
    corpus = st.text_input("Corpus", value=st.session_state.get("evidence_corpus", "defame-default"))
    st.session_state["evidence_corpus"] = corpus
    status_box(client, corpus)
    with st.form("evidence-upload", clear_on_submit=True, enter_to_submit=False):  # only the button adds
        files = st.file_uploader(
            "Documents (.txt, .md, .html; UTF-8, ≤ 2 MB each)",
            type=["txt", "md", "html", "htm"],
            accept_multiple_files=True,
        )
        date = st.date_input("Published on (optional)", value=None)
        if st.form_submit_button("Add documents", type="primary") and files:
            data = {"corpus": corpus} | ({"date": date.isoformat()} if date else {})
            uploads = [("files", (f.name, f.getvalue(), f.type or "text/plain")) for f in files]
            try:
                added = client.post("/v1/evidence/documents", data=data, files=uploads)
                st.success(f"Added {len(added)} document(s).")
            except ApiError as exc:
                show_api_error(exc, what="Not added")
    try:
        docs = client.get("/v1/evidence/documents", corpus=corpus)
    except ApiError as exc:
        st.error(f"Cannot list documents ({exc.status}): {exc.message}")
        return
    st.subheader(f"{len(docs)} document(s)")
    for d in docs:
        with st.container(border=True):
            c1, c2 = st.columns([5, 1])
            c1.markdown(f"**{d['title'] or d['url']}** · {d['chunks']} chunk(s), {d['chars']} characters")
            c1.caption(d["url"] + (f" · {d['date']}" if d.get("date") else ""))
            c1.text(d["preview"])
            if c2.button("Delete", key=f"del-{d['id']}"):
                try:
                    client.delete(f"/v1/evidence/documents/{d['id']}?corpus={corpus}")
                    st.rerun()
                except ApiError as exc:
                    st.error(f"Delete failed ({exc.status}): {exc.message}")
