"""Vision-language substrate page: browse the shared datasets, train the tiny CLIP, classify an image zero-shot.

Talks to the API only: ``GET /v1/vlm/datasets[...]`` for the browser, ``POST /v1/vlm/zeroshot`` for
uploads, ``POST /v1/jobs`` for ``vlm.train`` and ``vlm.zeroshot`` on a dataset image.
"""

from __future__ import annotations

import io
import uuid

import streamlit as st

from ui.client import ApiError
from ui.components import device_inputs, follow_job, get_client, render_report

PAGE = {"title": "Vision-language (tiny CLIP)", "icon": ":material/image_search:", "section": "Methods", "order": 50}
PER_PAGE = 24


def _browse(client) -> None:
    try:
        sets = client.get("/v1/vlm/datasets")
    except ApiError as exc:
        st.error(f"Cannot list the datasets ({exc.status}): {exc.detail}")
        return
    by_name = {d["name"]: d for d in sets}
    c1, c2, c3 = st.columns([2, 1, 1])
    name = c1.selectbox(
        "Dataset", list(by_name), key="vlm-ds", format_func=lambda n: f"{n} — {by_name[n]['description']}"
    )
    split = c2.selectbox("Split", by_name[name]["splits"], index=len(by_name[name]["splits"]) - 1, key="vlm-split")
    start = int(c3.number_input("First image", 0, 100_000, 0, step=PER_PAGE, key="vlm-start"))
    try:
        meta = client.get(f"/v1/vlm/datasets/{name}/{split}/items", start=start, count=PER_PAGE)
        png = client.get_bytes(f"/v1/vlm/datasets/{name}/{split}/grid.png?start={start}&count={PER_PAGE}")
    except ApiError as exc:
        st.error(f"Cannot load {name}/{split} ({exc.status}): {exc.detail}")
        return
    st.caption(f"{meta['size']} images · {len(meta['classnames'])} classes: {', '.join(meta['classnames'][:24])}")
    st.image(io.BytesIO(png), caption="ground-truth boxes in green (scenes and objects)")
    import pandas as pd

    rows = [{"index": it["index"], "class": it["class"], "caption": it["captions"][min(1, len(it["captions"]) - 1)]}
            for it in meta["items"]]  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def _classify(client) -> None:
    kind = st.radio("Image", ["Dataset image", "Upload"], horizontal=True, key="vlm-zs-kind")
    names = st.text_input("Class names (comma-separated; empty = the dataset's classes)", "", key="vlm-zs-names")
    template = st.text_input("Template", "a photo of a {}.", key="vlm-zs-template")
    upload, source = None, {}
    if kind == "Upload":
        upload = st.file_uploader("Image", type=["png", "jpg", "jpeg", "webp", "bmp", "gif"], key="vlm-zs-upload")
    else:
        c1, c2 = st.columns(2)
        source["dataset"] = c1.selectbox(
            "Dataset", ["objects", "objects20", "digits", "photos", "scenes"], key="vlm-zs-ds"
        )
        source["index"] = int(c2.number_input("Test image index", 0, 1999, 0, key="vlm-zs-idx"))
    device = device_inputs("vlm-zs")
    if st.button("Classify", type="primary", key="vlm-zs-go"):
        classnames = [c.strip() for c in names.split(",") if c.strip()]
        try:
            if upload is not None:
                files = {"image": (upload.name, upload.getvalue(), upload.type or "application/octet-stream")}
                data = {"classnames": names, "template": template, **device}
                job = client.post("/v1/vlm/zeroshot", files=files, data=data)
            elif kind == "Upload":
                st.error("Choose an image to upload.")
                return
            else:
                params = {**source, "split": "test", "classnames": classnames, "template": template, **device}
                job = client.submit("vlm.zeroshot", params, idempotency_key=uuid.uuid4().hex)
        except ApiError as exc:
            st.error(f"Rejected ({exc.status}): {exc.detail}")
            return
        st.session_state["vlm_zs_job"] = job["id"]
    job_id = st.session_state.get("vlm_zs_job")
    if job_id:
        done = follow_job(client, job_id, cancel="Cancel")
        if done is not None and done["status"] == "succeeded":
            render_report(client, job_id)


def _train(client) -> None:
    st.caption(
        "The tiny CLIP (2+2 layers, width 64, 32×32 images, patch 8) is trained once on captioned scenes, "
        "digits and photo crops and cached; the job reports its loss curve, zero-shot accuracy and retrieval."
    )
    preset = st.radio("Preset", ["default", "test"], horizontal=True, key="vlm-train-preset")
    device = device_inputs("vlm-train")
    if st.button("Train or load", key="vlm-train-go"):
        try:
            job = client.submit("vlm.train", {"preset": preset, **device}, idempotency_key=uuid.uuid4().hex)
        except ApiError as exc:
            st.error(f"Rejected ({exc.status}): {exc.detail}")
            return
        st.session_state["vlm_train_job"] = job["id"]
    job_id = st.session_state.get("vlm_train_job")
    if job_id:
        done = follow_job(client, job_id, cancel="Cancel")
        if done is not None and done["status"] == "succeeded":
            render_report(client, job_id)


def render() -> None:
    st.title("Vision-language substrate")
    st.caption("The image–text model and datasets that DOR, LADA, GMAIL, Double-Filter and M3-JEPA share.")
    client = get_client()
    st.session_state.setdefault("vlm_zs_job", None)
    st.session_state.setdefault("vlm_train_job", None)
    browse, classify, train = st.tabs(["Datasets", "Zero-shot", "Model"])
    with browse:
        _browse(client)
    with classify:
        _classify(client)
    with train:
        _train(client)
