"""Deraining page (FourierMamba): upload an image or pick a sample, optionally add synthetic rain,
see input | output (| ground truth) with PSNR/SSIM on the Y channel.

Talks to the API only: ``POST /v1/fourier_mamba/derain`` for uploads, ``POST /v1/jobs``
(``fourier_mamba.derain`` with ``sample``) for the shipped samples.
"""

from __future__ import annotations

import io
import uuid
from typing import Any

import streamlit as st

from ui.client import ApiError
from ui.components import (
    follow_job,
    get_client,
    method_schema,
    model_notice,
    schema_inputs,
    show_api_error,
    submit_button,
)

PAGE = {"title": "Deraining (FourierMamba)", "icon": ":material/water_drop:", "section": "Methods", "order": 35}
METHOD = "fourier_mamba.derain"
SAMPLES = {
    "rain100l_1": "Rain100L 1 (real rain)",
    "rain100l_2": "Rain100L 2 (real rain)",
    "rain100l_3": "Rain100L 3 (real rain)",
    "china": "china.jpg (clean)",
    "flower": "flower.jpg (clean)",
}
RAIN = {None: "none", "L": "light (L)", "H": "heavy (H)"}
LABELS = {"add_rain": "Add synthetic rain", "rain_seed": "Rain seed", "scan_order": "Scan order", "preset": "Model"}


def _submit(client, sample: str | None, upload, fields: dict[str, Any], schema: dict[str, Any]) -> None:
    try:
        if upload is not None:
            files = {"image": (upload.name, upload.getvalue(), upload.type or "application/octet-stream")}
            data = {k: str(v) for k, v in fields.items() if v is not None}
            job = client.post("/v1/fourier_mamba/derain", files=files, data=data)
        else:
            job = client.submit("fourier_mamba.derain", {"sample": sample, **fields}, idempotency_key=uuid.uuid4().hex)
    except ApiError as exc:
        show_api_error(exc, schema=schema, labels=LABELS)
        return
    st.session_state["fm_job"] = job["id"]


def _image(client, body: dict[str, Any], name: str):
    ref = next((a for a in body.get("artifacts", []) if a["name"] == name and a.get("id")), None)
    return io.BytesIO(client.artifact(ref["id"])) if ref else None


def _show(client, job_id: str) -> None:
    body = client.report(job_id)["body"]
    m = body.get("metrics", {})
    st.markdown(f"**{body.get('title')}** — {body.get('summary')}")
    panels = [("input.png", "Input"), ("output.png", "Output")]
    if _image(client, body, "ground_truth.png") is not None:
        panels.append(("ground_truth.png", "Ground truth"))
    cols = st.columns(len(panels))
    for col, (name, title) in zip(cols, panels, strict=True):
        col.markdown(f"**{title}**")
        img = _image(client, body, name)
        if img is not None:
            col.image(img, width="stretch")
        if "psnr_y_input" in m and name != "ground_truth.png":
            which = "input" if name == "input.png" else "output"
            col.caption(f"PSNR(Y) {m[f'psnr_y_{which}']:.2f} dB · SSIM(Y) {m[f'ssim_y_{which}']:.4f}")
    st.caption(f"model: {m.get('preset')} preset, {m.get('scan_order')} scan, {m.get('params', 0):,} parameters")


def render() -> None:
    st.title("Remove rain from an image (FourierMamba)")
    st.caption(
        "FourierMamba runs Mamba selective scans inside Fourier space: over the 2-D spectrum in a zigzag "
        "order from low to high frequency, and over the spectrum of the channels. The model here is "
        "FourierMamba-Tiny trained for minutes on synthetic rain over a few real photos (trained on first use), "
        "so expect a visible but partial clean-up, not the paper's Rain13K-trained results."
    )
    client = get_client()
    st.session_state.setdefault("fm_job", None)
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    kind = st.radio("Image", ["Sample", "Upload"], horizontal=True, key="fm-kind")
    sample, upload = None, None
    if kind == "Sample":
        prop = schema["properties"]["sample"]
        names = next((a["enum"] for a in prop.get("anyOf", [prop]) if "enum" in a), [])
        sample = st.selectbox("Sample", names, key="fm-sample", format_func=lambda n: SAMPLES.get(n, n))
    else:
        upload = st.file_uploader("Image", type=["png", "jpg", "jpeg", "webp", "bmp"], key="fm-upload")
    form = schema_inputs(
        schema,
        "fm",
        only=["add_rain", "rain_seed", "scan_order", "preset"],
        labels=LABELS,
        format_funcs={"add_rain": lambda r: RAIN.get(r, str(r))},
        columns=4,
        fixed={"image_sha256": None, "sample": None},
    )
    fields = {k: v for k, v in form.params.items() if k not in ("image_sha256", "sample")}
    if fields.get("add_rain") is None and (upload is not None or (sample or "").startswith(("china", "flower"))):
        st.info("Without added rain a clean photo or an upload has no ground truth: no PSNR/SSIM.")
    if not form.errors:
        model_notice(client, METHOD, {"sample": sample or "china", **fields})
    if submit_button("Derain", "fm-go", form.errors):
        if kind == "Upload" and upload is None:
            st.error("Choose an image to upload.")
        else:
            _submit(client, sample, upload, fields, schema)
    job_id = st.session_state.get("fm_job")
    if job_id:
        st.divider()
        job = follow_job(client, job_id, log=True)
        if job is not None and job["status"] == "succeeded":
            _show(client, job_id)
