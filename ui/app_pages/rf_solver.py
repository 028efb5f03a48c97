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
from ui.components import (
    DEVICE_FIELDS,
    follow_job,
    get_client,
    method_schema,
    model_notice,
    schema_inputs,
    show_api_error,
    submit_button,
)

PAGE = {"title": "Image editing (RF-Edit)", "icon": ":material/auto_fix_high:", "section": "Methods", "order": 30}
DIGITS = [str(i) for i in range(10)]
PHOTOS = ["china", "flower"]
RECON_NFES = [4, 10, 20, 50]
METHOD = "rf.edit"
LABELS = {
    "digit_index": "Digit index",
    "example": "Example",
    "steps": "Steps N",
    "order": "Solver",
    "inject": "Inject steps k",
    "guidance": "Guidance",
    "shift": "FLUX-dev schedule shift",
}


def _submit(client, source: dict[str, Any], upload, edit: dict[str, Any], schema: dict[str, Any]) -> None:
    """Start the edit job and the reconstruction-vs-NFE job; remember their ids."""
    recon = {
        "label": edit["source_label"],
        "model": edit["model"],
        "shift": edit["shift"],
        **{k: edit[k] for k in DEVICE_FIELDS if k in edit},
    }
    try:
        if upload is not None:
            files = {"image": (upload.name, upload.getvalue(), upload.type or "application/octet-stream")}
            job = client.post("/v1/rf/edit", files=files, data={k: str(v) for k, v in edit.items()})
            files = {"image": (upload.name, upload.getvalue(), upload.type or "application/octet-stream")}
            rec = client.post(
                "/v1/rf/reconstruct",
                files=files,
                data={**{k: str(v) for k, v in recon.items()}, "nfes": ",".join(map(str, RECON_NFES))},
            )
        else:
            job = client.submit("rf.edit", {**source, **edit}, idempotency_key=uuid.uuid4().hex)
            rec = client.submit(
                "rf.reconstruct", {**source, **recon, "nfes": RECON_NFES}, idempotency_key=uuid.uuid4().hex
            )
    except ApiError as exc:
        show_api_error(exc, schema=schema, labels=LABELS)
        return
    st.session_state["rf_jobs"] = {"edit": job["id"], "recon": rec["id"]}


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
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    kind = st.radio("Image", ["Held-out digit", "Example photo", "Upload"], horizontal=True, key="rf-kind")
    source: dict[str, Any] = {}
    upload = None
    errors: list[str] = []
    if kind == "Held-out digit":
        st.session_state.setdefault("rf-src-digit_index", 0)  # the schema's default is "no digit"
        pick = schema_inputs(schema, "rf-src", only=["digit_index"], labels=LABELS, device=False)
        source, errors = {"digit_index": pick.params.get("digit_index", 0)}, pick.errors
        model = "digits"
    elif kind == "Example photo":
        prop = schema["properties"]["example"]
        names = next((a["enum"] for a in prop.get("anyOf", [prop]) if "enum" in a), [])
        source = {"example": st.selectbox("Example", names, key="rf-example", help=prop.get("description"))}
        model = "photo"
    else:
        upload = st.file_uploader("Image", type=["png", "jpg", "jpeg", "webp", "bmp", "gif"], key="rf-upload")
        model = st.radio("Model", ["digits", "photo"], horizontal=True, key="rf-model")
    labels = DIGITS if model == "digits" else PHOTOS
    c1, c2 = st.columns(2)  # the label sets belong to the trained model: a schema cannot say them
    src = c1.selectbox("Source label", labels, index=3 if model == "digits" else 0, key="rf-src-label")
    tgt = c2.selectbox("Target label", labels, index=8 if model == "digits" else 1, key="rf-tgt-label")
    form = schema_inputs(
        schema,
        "rf",
        only=["steps", "order", "inject", "guidance", "shift"],
        more=True,
        labels=LABELS,
        format_funcs={"order": {1: "Euler", 2: "RF-Solver-2"}.get},
        columns=4,
        fixed={"source_label": src, "target_label": tgt, "model": model, "image_sha256": None, "digit_index": None,
               "example": None},
    )  # fmt: skip
    edit = {k: v for k, v in form.params.items() if k not in ("image_sha256", "digit_index", "example")}
    if edit.get("inject", 0) > edit.get("steps", 0):
        form.errors.append(f"{LABELS['inject']}: at most the number of steps ({edit.get('steps')}).")
    if not edit.get("shift", True):
        st.warning(
            "Without the shift the grid is flux-schnell's linear one; few-step distilled models such as "
            "flux-schnell invert badly (RF-Solver-Edit issue #15) — check a plain reconstruction first."
        )
    if not form.errors:
        model_notice(client, METHOD, {**source, **edit} if upload is None else {"digit_index": 0, **edit})
    if submit_button("Edit", "rf-go", errors + form.errors):
        if kind == "Upload" and upload is None:
            st.error("Choose an image to upload.")
        else:
            _submit(client, source, upload, edit, schema)
    jobs = st.session_state.get("rf_jobs")
    if jobs:
        st.divider()
        # the edit and the reconstruction jobs (their phases, first-use training included, logged); each result
        # as soon as it has ended
        done = follow_job(client, jobs, log=True)
        for name, show in (("edit", _show_edit), ("recon", _show_recon)):
            job = done.get(name)
            if job is not None and job["status"] == "succeeded":
                show(client, job["id"])
