"""Vision-language substrate page: browse the shared datasets, train the tiny CLIP, classify an image zero-shot.

Talks to the API only: ``GET /v1/vlm/datasets[...]`` for the browser, ``POST /v1/vlm/zeroshot`` for
uploads, ``POST /v1/jobs`` for ``vlm.train`` and ``vlm.zeroshot`` on a dataset image.
"""

from __future__ import annotations

import io

import streamlit as st

from ui.client import ApiError
from ui.components import (
    follow_job,
    get_client,
    method_schema,
    model_notice,
    render_report,
    schema_form,
    schema_inputs,
    show_api_error,
    submit_button,
    submit_job,
)

PAGE = {"title": "Vision-language (tiny CLIP)", "icon": ":material/image_search:", "section": "Methods", "order": 50}
PER_PAGE = 24
ZEROSHOT, TRAIN = "vlm.zeroshot", "vlm.train"


def _browse(client) -> None:
    try:
        sets = client.get("/v1/vlm/datasets")
    except ApiError as exc:
        st.error(f"Cannot list the datasets ({exc.status}): {exc.message}")
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
        st.error(f"Cannot load {name}/{split} ({exc.status}): {exc.message}")
        return
    st.caption(f"{meta['size']} images · {len(meta['classnames'])} classes: {', '.join(meta['classnames'][:24])}")
    st.image(io.BytesIO(png), caption="ground-truth boxes in green (scenes and objects)")
    import pandas as pd

    rows = [{"index": it["index"], "class": it["class"], "caption": it["captions"][min(1, len(it["captions"]) - 1)]}
            for it in meta["items"]]  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def _classify(client) -> None:
    schema = method_schema(client, ZEROSHOT)
    if schema is None:
        return
    kind = st.radio("Image", ["Dataset image", "Upload"], horizontal=True, key="vlm-zs-kind")
    upload = None
    if kind == "Upload":
        upload = st.file_uploader("Image", type=["png", "jpg", "jpeg", "webp", "bmp", "gif"], key="vlm-zs-upload")
        only = ["classnames", "template", "preset"]
    else:
        only = ["dataset", "split", "index", "classnames", "template", "preset"]
    form = schema_inputs(
        schema, "vlm-zs", only=only, columns=3, labels={"classnames": "Class names (empty: the dataset's classes)"}
    )
    params = form.params
    if upload is None and kind == "Dataset image" and not form.errors:
        _preview(client, params)
    if not form.errors:
        model_notice(client, ZEROSHOT, params if upload is None else {**params, "dataset": "objects"})
    if submit_button("Classify", "vlm-zs-go", form.errors):
        if kind == "Upload":
            if upload is None:
                st.error("Choose an image to upload.")
                return
            files = {"image": (upload.name, upload.getvalue(), upload.type or "application/octet-stream")}
            data = {
                k: ",".join(v) if isinstance(v, list) else str(v) for k, v in params.items() if k != "classnames"
            } | {"classnames": ",".join(params.get("classnames") or [])}
            try:
                job = client.post("/v1/vlm/zeroshot", files=files, data=data)
            except ApiError as exc:
                show_api_error(exc, schema=schema)
                return
            st.session_state["vlm_zs_job"] = job["id"]
        else:
            job_id = submit_job(client, ZEROSHOT, params, schema=schema)
            if job_id:
                st.session_state["vlm_zs_job"] = job_id
    job_id = st.session_state.get("vlm_zs_job")
    if job_id:
        done = follow_job(client, job_id, cancel="Cancel", log=True)
        if done is not None and done["status"] == "succeeded":
            _zero_shot_result(client, job_id)


def _preview(client, params: dict) -> None:
    """The chosen dataset image and its true class, before the click."""
    name, split, index = params.get("dataset", "objects"), params.get("split", "test"), params.get("index", 0)
    try:
        meta = client.get(f"/v1/vlm/datasets/{name}/{split}/items", start=index, count=1)
        png = client.get_bytes(f"/v1/vlm/datasets/{name}/{split}/grid.png?start={index}&count=1")
    except ApiError:
        return
    items = meta.get("items") or []
    if items:
        st.image(io.BytesIO(png), width=96, caption=f"{name}/{split} #{index} · true label: {items[0]['class']}")


def _zero_shot_result(client, job_id: str) -> None:
    """The report, headed by the true label (a dataset image's class) beside the prediction."""
    try:
        body = client.report(job_id)["body"]
    except ApiError as exc:
        show_api_error(exc, what="No report yet")
        return
    m, truth = body.get("metrics") or {}, (body.get("data") or {}).get("truth")
    if truth is not None:
        right = m.get("top1") == truth
        c1, c2 = st.columns(2)
        c1.metric("Predicted", str(m.get("top1")), help=f"p = {m.get('top1_prob')}")
        c2.metric(
            "True label", truth, delta="correct" if right else "wrong", delta_color="normal" if right else "inverse"
        )
    render_report(client, job_id)


def _train(client) -> None:
    st.caption(
        "The tiny CLIP (2+2 layers, width 64, 32×32 images, patch 8) is trained once on captioned scenes, "
        "digits and photo crops and cached; the job reports its loss curve, zero-shot accuracy and retrieval."
    )
    schema = method_schema(client, TRAIN)
    if schema is None:
        return
    params = schema_form(schema, "vlm-train", columns=3, submit_label="Train or load", client=client, method=TRAIN)
    if params is not None:
        job_id = submit_job(client, TRAIN, params, schema=schema)
        if job_id:
            st.session_state["vlm_train_job"] = job_id
    job_id = st.session_state.get("vlm_train_job")
    if job_id:
        done = follow_job(client, job_id, cancel="Cancel", log=True)
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
