"""RF-Edit page: pick or upload an image, choose steps/order/inject k, see source | reconstruction | edit.

Talks to the API only: ``POST /v1/rf/edit`` (uploads) or ``POST /v1/jobs`` (``rf.edit`` on a
held-out digit or a shared example photo), plus an ``rf.reconstruct`` job for the plot of
reconstruction error vs NFE (Euler vs RF-Solver-2 at equal NFE).
"""

from __future__ import annotations

import io
import uuid
from typing import Any

import streamlit as st

from ui.client import ApiError
from ui.components import DEVICE_FIELDS, device_inputs, follow_job, get_client

PAGE = {"title": "Image editing (RF-Edit)", "icon": ":material/auto_fix_high:", "section": "Methods", "order": 30}
DIGITS = [str(i) for i in range(10)]
PHOTOS = ["china", "flower"]
EXAMPLES = ["boy.jpg", "hiking.jpg", "horse.jpg"]
RECON_NFES = [4, 10, 20, 50]


def _submit(client, source: dict[str, Any], upload, edit: dict[str, Any]) -> None:
    """Start the edit job and the reconstruction-vs-NFE job; remember their ids."""
    try:
        if upload is not None:
            files = {"image": (upload.name, upload.getvalue(), upload.type or "application/octet-stream")}
            job = client.post("/v1/rf/edit", files=files, data={k: str(v) for k, v in edit.items()})
            files = {"image": (upload.name, upload.getvalue(), upload.type or "application/octet-stream")}
            recon = client.post(
                "/v1/rf/reconstruct",
                files=files,
                data={
                    "label": edit["source_label"],
                    "model": edit["model"],
                    "nfes": ",".join(map(str, RECON_NFES)),
                    **{k: edit[k] for k in DEVICE_FIELDS if k in edit},
                },
            )
        else:
            job = client.submit("rf.edit", {**source, **edit}, idempotency_key=uuid.uuid4().hex)
            recon = client.submit(
                "rf.reconstruct",
                {
                    **source,
                    "label": edit["source_label"],
                    "model": edit["model"],
                    "nfes": RECON_NFES,
                    **{k: edit[k] for k in DEVICE_FIELDS if k in edit},
                },
                idempotency_key=uuid.uuid4().hex,
            )
    except ApiError as exc:
        st.error(f"Rejected ({exc.status}): {exc.detail}")
        return
    st.session_state["rf_jobs"] = {"edit": job["id"], "recon": recon["id"]}


def _image(client, body: dict[str, Any], name: str):
    ref = next((a for a in body.get("artifacts", []) if a["name"] == name and a.get("id")), None)
    return io.BytesIO(client.artifact(ref["id"])) if ref else None


def _show_edit(client, job_id: str) -> None:
    body = client.report(job_id)["body"]
    m = body.get("metrics", {})
    st.markdown(f"**{body.get('title')}** — {body.get('summary')}")
    cols = st.columns(3)
    captions = (
        ("source.png", "Source", ""),
        (
            "reconstruction.png",
            "Reconstruction",
            f"PSNR {m.get('recon_psnr', 0):.1f} dB · SSIM {m.get('recon_ssim', 0):.3f} · MSE {m.get('recon_mse', 0):.2e}",
        ),
        (
            "edit.png",
            "Edit",
            f"MSE to source {m.get('edit_mse_to_source', 0):.2e} · "
            f"SSIM to source {m.get('edit_ssim_to_source', 0):.3f}",
        ),
    )
    for col, (name, title, err) in zip(cols, captions):
        img = _image(client, body, name)
        col.markdown(f"**{title}**")
        if img is not None:
            col.image(img, width="stretch")
        if err:
            col.caption(err)
    st.caption(
        f"NFE: reconstruction {m.get('recon_nfe')}, edit {m.get('edit_nfe')} · V tensors cached and freed: "
        f"{m.get('cached_v_tensors')} ({m.get('cache_mb')} MB) · edit took {m.get('edit_seconds')} s"
    )


def _show_recon(client, job_id: str) -> None:
    body = client.report(job_id)["body"]
    st.markdown("**Reconstruction error vs NFE** (Euler with N steps vs RF-Solver-2 with N/2: equal NFE)")
    plot = _image(client, body, "recon_vs_nfe.png")
    if plot is not None:
        st.image(plot, width=480)
    for t in body.get("tables", []):
        import pandas as pd

        st.dataframe(pd.DataFrame(t["rows"], columns=t["columns"]), hide_index=True)


def _follow(client, jobs: dict[str, str]) -> None:
    """Progress of the edit and reconstruction jobs; each one's result as soon as it has ended."""
    done = follow_job(client, jobs)
    for kind, show in (("edit", _show_edit), ("recon", _show_recon)):
        job = done.get(kind)
        if job is not None and job["status"] == "succeeded":
            show(client, job["id"])


def render() -> None:
    st.title("Invert and edit an image (RF-Solver / RF-Edit)")
    st.caption(
        "The image is inverted to noise with RF-Solver under its source label, then resampled under the "
        "target label while the late blocks reuse the source's attention values (V) for the first k "
        "steps. Larger k keeps more of the source; smaller k edits more. Runs on the project's tiny "
        "rectified-flow DiT (digits 16×16, or 32×32 photos labelled china/flower)."
    )
    client = get_client()
    st.session_state.setdefault("rf_jobs", None)
    kind = st.radio("Image", ["Held-out digit", "Example photo", "Upload"], horizontal=True, key="rf-kind")
    source: dict[str, Any] = {}
    upload = None
    if kind == "Held-out digit":
        source["digit_index"] = int(st.number_input("Digit index (0–296)", 0, 296, 0, key="rf-digit"))
        model = "digits"
    elif kind == "Example photo":
        source["example"] = st.selectbox("Example", EXAMPLES, key="rf-example")
        model = "photo"
    else:
        upload = st.file_uploader("Image", type=["png", "jpg", "jpeg", "webp", "bmp", "gif"], key="rf-upload")
        model = (
            "digits" if st.radio("Model", ["digits", "photo"], horizontal=True, key="rf-model") == "digits" else "photo"
        )
    labels = DIGITS if model == "digits" else PHOTOS
    c1, c2 = st.columns(2)
    src = c1.selectbox("Source label", labels, index=3 if model == "digits" else 0, key="rf-src")
    tgt = c2.selectbox("Target label", labels, index=8 if model == "digits" else 1, key="rf-tgt")
    c1, c2, c3, c4 = st.columns(4)
    steps = c1.slider("Steps N", 1, 50, 15, key="rf-steps")
    order_name = c2.radio("Solver", ["RF-Solver-2", "Euler"], key="rf-order")
    inject = c3.slider("Number of inject steps k", 0, steps, min(2, steps), key="rf-inject")
    guidance = c4.number_input("Guidance", 1.0, 10.0, 2.0, step=0.5, key="rf-guidance")
    shift = st.checkbox("FLUX-dev schedule shift", value=True, key="rf-shift")
    with st.expander("Ablation options (defaults = the paper's RF-Edit)"):
        a1, a2, a3 = st.columns(3)
        v_keys = a1.radio(
            "V keyed by", ["interval", "eval"], key="rf-vkeys", help="interval: the interval's upper time (spec §3.5)"
        )
        cfg_halves = a2.radio("Source V into guidance halves", ["both", "cond"], key="rf-cfg")
        blocks = a3.radio("Single-stream blocks sharing V", ["all", "later_half"], key="rf-blocks")
    if not shift:
        st.warning(
            "Without the shift the grid is flux-schnell's linear one; few-step distilled models such as "
            "flux-schnell invert badly (RF-Solver-Edit issue #15) — check a plain reconstruction first."
        )
    device = device_inputs("rf")
    if st.button("Edit", type="primary", key="rf-go"):
        if kind == "Upload" and upload is None:
            st.error("Choose an image to upload.")
        else:
            edit = {
                "source_label": src,
                "target_label": tgt,
                "steps": steps,
                "inject": inject,
                "order": 2 if order_name == "RF-Solver-2" else 1,
                "guidance": guidance,
                "model": model,
                "shift": shift,
                "v_keys": v_keys,
                "cfg_halves": cfg_halves,
                "blocks": blocks,
                **device,
            }
            _submit(client, source, upload, edit)
    jobs = st.session_state.get("rf_jobs")
    if jobs:
        st.divider()
        _follow(client, jobs)
