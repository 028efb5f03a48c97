"""Reusable Streamlit pieces: a form generated from a JSON schema, a report viewer, a jobs table."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import streamlit as st

from ui.client import ApiClient, ApiError

_IMG_LINK = re.compile(r"!\[([^\]]*)\]\(artifact:([A-Za-z0-9_.\-/]+)\)")


@st.cache_resource
def get_client() -> ApiClient:
    return ApiClient()


def _resolve(schema: dict[str, Any], prop: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Unwrap ``anyOf: [X, null]`` and ``$ref``; returns (schema, nullable)."""
    nullable = False
    if "anyOf" in prop:
        opts = [o for o in prop["anyOf"] if o.get("type") != "null"]
        nullable = len(opts) < len(prop["anyOf"])
        merged = {**(opts[0] if opts else {}), **{k: v for k, v in prop.items() if k != "anyOf"}}
        prop = merged
    if "$ref" in prop:
        name = prop["$ref"].split("/")[-1]
        prop = {**schema.get("$defs", {}).get(name, {}), **{k: v for k, v in prop.items() if k != "$ref"}}
    return prop, nullable


def schema_form(schema: dict[str, Any], key: str) -> dict[str, Any] | None:
    """Render inputs for a pydantic JSON schema inside a form; returns params on submit."""
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    values: dict[str, Any] = {}
    with st.form(key=f"form-{key}"):
        for name, raw in props.items():
            prop, nullable = _resolve(schema, raw)
            label = prop.get("title", name) + ("" if name in required else " (optional)" if nullable else "")
            help_ = prop.get("description")
            default = prop.get("default", raw.get("default"))
            typ = prop.get("type")
            wkey = f"{key}-{name}"
            if "enum" in prop:
                opts = list(prop["enum"])
                values[name] = st.selectbox(label, opts, index=opts.index(default) if default in opts else 0,
                                            help=help_, key=wkey)
            elif typ == "boolean":
                values[name] = st.checkbox(label, value=bool(default), help=help_, key=wkey)
            elif typ == "integer":
                values[name] = int(st.number_input(label, value=int(default if default is not None else
                                                                    prop.get("minimum", 0)),
                                                   min_value=prop.get("minimum"), max_value=prop.get("maximum"),
                                                   step=1, help=help_, key=wkey))
            elif typ == "number":
                values[name] = float(st.number_input(label, value=float(default if default is not None else
                                                                        prop.get("minimum", 0.0)),
                                                     min_value=_f(prop.get("minimum")),
                                                     max_value=_f(prop.get("maximum")), help=help_, key=wkey))
            elif typ == "array" and prop.get("items", {}).get("type") == "string":
                text = st.text_area(label + " — one per line", value="\n".join(default or []), help=help_, key=wkey)
                values[name] = [ln for ln in text.splitlines() if ln.strip()]
            elif typ == "string":
                text = st.text_input(label, value=default or "", help=help_, key=wkey)
                values[name] = text if (text or not nullable) else None
            else:
                text = st.text_area(label + " (JSON)", value=json.dumps(default), help=help_, key=wkey)
                try:
                    values[name] = json.loads(text) if text.strip() else None
                except json.JSONDecodeError:
                    values[name] = text
        submitted = st.form_submit_button("Submit job", type="primary")
    return {k: v for k, v in values.items() if v is not None} if submitted else None


def _f(v: Any) -> float | None:
    return float(v) if v is not None else None


def render_report(client: ApiClient, job_id: str) -> None:
    """Title, summary, metrics, sections with inline images, tables and the remaining artifacts."""
    try:
        rep = client.report(job_id)
    except ApiError as exc:
        st.info(f"No report yet: {exc.detail}")
        return
    body = rep["body"]
    by_name = {a["name"]: a for a in body.get("artifacts", [])}
    st.subheader(body.get("title", rep["title"]))
    if body.get("summary"):
        st.markdown(body["summary"])
    metrics = body.get("metrics") or {}
    if metrics:
        cols = st.columns(min(4, len(metrics)))
        for i, (k, v) in enumerate(metrics.items()):
            cols[i % len(cols)].metric(k, f"{v:.4g}" if isinstance(v, float) else str(v))
    shown: set[str] = set()
    for sec in body.get("sections", []):
        st.markdown(f"#### {sec['title']}")
        _markdown_with_images(client, sec["markdown"], by_name, shown)
    for t in body.get("tables", []):
        st.markdown(f"**{t['title']}**")
        import pandas as pd

        df = pd.DataFrame(t["rows"], columns=t["columns"])
        if len(df) <= 60:  # small tables as real HTML (searchable, copyable)
            st.table(df.set_index(df.columns[0]) if len(df.columns) > 1 else df)
        else:
            st.dataframe(df, hide_index=True, width="stretch")
        if t.get("note"):
            st.caption(t["note"])
    for a in body.get("artifacts", []):
        if a["name"] in shown or not a.get("id"):
            continue
        data = client.artifact(a["id"])
        if a["kind"] in ("image", "plot"):
            st.image(io.BytesIO(data), caption=a.get("caption") or a["name"])
        else:
            st.download_button(f"Download {a['name']}", data=data, file_name=a["name"], mime=a.get("mime"),
                               key=f"dl-{job_id}-{a['name']}")
    with st.expander("Report as Markdown"):
        st.code(rep["markdown"], language="markdown")


def _markdown_with_images(client: ApiClient, text: str, by_name: dict[str, Any], shown: set[str]) -> None:
    pos = 0
    for m in _IMG_LINK.finditer(text):
        if text[pos:m.start()].strip():
            st.markdown(text[pos:m.start()])
        ref = by_name.get(m.group(2))
        if ref and ref.get("id"):
            st.image(io.BytesIO(client.artifact(ref["id"])), caption=m.group(1) or ref["name"])
            shown.add(ref["name"])
        pos = m.end()
    if text[pos:].strip():
        st.markdown(text[pos:])


def jobs_table(client: ApiClient, method: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
    """A table of recent jobs with progress; returns the jobs."""
    try:
        jobs = client.jobs(limit=limit, method=method)
    except ApiError as exc:
        st.error(f"Cannot list jobs: {exc.detail}")
        return []
    if not jobs:
        st.caption("No jobs yet.")
        return []
    import pandas as pd

    df = pd.DataFrame([{"status": j["status"], "method": j["method"],
                        "progress": j["progress"], "message": (j["message"] or "")[:80], "id": j["id"],
                        "created": j["created_at"][:19].replace("T", " ")} for j in jobs])
    st.dataframe(df, hide_index=True, width="stretch",
                 column_config={"progress": st.column_config.ProgressColumn("progress", min_value=0, max_value=1)})
    return jobs
