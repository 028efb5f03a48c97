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
from ui.components import device_inputs, follow_job, get_client

PAGE = {"title": "Deraining (FourierMamba)", "icon": ":material/water_drop:", "section": "Methods", "order": 35}
SAMPLES = {
    "Rain100L 1 (real rain)": "rain100l_1",
    "Rain100L 2 (real rain)": "rain100l_2",
    "Rain100L 3 (real rain)": "rain100l_3",
    "china.jpg (clean)": "china",
    "flower.jpg (clean)": "flower",
}
RAIN = {"none": None, "light (L)": "L", "heavy (H)": "H"}


def _submit(client, sample: str | None, upload, fields: dict[str, Any]) -> None:
    try:
        if upload is not None:
            files = {"image": (upload.name, upload.getvalue(), upload.type or "application/octet-stream")}
            data = {k: str(v) for k, v in fields.items() if v is not None}
            job = client.post("/v1/fourier_mamba/derain", files=files, data=data)
        else:
            job = client.submit("fourier_mamba.derain", {"sample": sample, **fields}, idempotency_key=uuid.uuid4().hex)
    except ApiError as exc:
        st.error(f"Rejected ({exc.status}): {exc.detail}")
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
    kind = st.radio("Image", ["Sample", "Upload"], horizontal=True, key="fm-kind")
    sample, upload = None, None
    if kind == "Sample":
        sample = SAMPLES[st.selectbox("Sample", list(SAMPLES), key="fm-sample")]
    else:
        upload = st.file_uploader("Image", type=["png", "jpg", "jpeg", "webp", "bmp"], key="fm-upload")
    c1, c2, c3 = st.columns(3)
    rain = RAIN[c1.selectbox("Add synthetic rain", list(RAIN), index=0, key="fm-rain")]
    seed = int(c2.number_input("Rain seed", 0, 2**31 - 1, 0, key="fm-seed"))
    order = c3.selectbox("Scan order", ["zigzag", "raster", "chebyshev"], key="fm-order")
    device = device_inputs("fm")
    if rain is None and (upload is not None or (sample or "").startswith(("china", "flower"))):
        st.info("Without added rain a clean photo or an upload has no ground truth: no PSNR/SSIM.")
    if st.button("Derain", type="primary", key="fm-go"):
        if kind == "Upload" and upload is None:
            st.error("Choose an image to upload.")
        else:
            _submit(client, sample, upload, {"add_rain": rain, "rain_seed": seed, "scan_order": order, **device})
    job_id = st.session_state.get("fm_job")
    if job_id:
        st.divider()
        job = follow_job(client, job_id)
        if job is not None and job["status"] == "succeeded":
            _show(client, job_id)
