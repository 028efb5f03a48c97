"""Report builders of the VLM jobs: the training report and the zero-shot classification report."""

from __future__ import annotations

from pathlib import Path

import torch

from core.evidence import Evidence
from core.jobs import Report
from core.jobs.report import Section
from core.provenance import provenance_line
from methods.vlm import plots


def training_report(
    folder: Path, info: dict, preset: dict, *, trained_now: bool, provenance: dict | None = None
) -> Report:
    """Loss curve, zero-shot accuracy beside chance, scene retrieval R@1/5 beside chance, a data grid.

    ``provenance`` (:func:`core.device.device_provenance`: where this job ran) goes into the metrics.
    """
    from methods.vlm.data import load_dataset

    ev = info["eval"]
    where = info.get("device", "cpu")
    took = f"{info['seconds']:.0f} s of wall time " + (
        "on this machine's shared CPUs" if where == "cpu" else f"on {info.get('gpu') or where}"
    )
    how = f"trained now in {took}" if trained_now else f"loaded from the cache (trained in {took})"
    report = Report(
        title=f"Tiny CLIP '{preset['name']}'",
        summary=f"Contrastive image–text model {how}: {len(info['losses'])} steps, vocabulary of "
        f"{info['vocab_size']} words{' incl. the WordNet lists' if info.get('wordnet') else ''}. "
        f"Cached as `<cache_dir>/vlm/tiny_clip/{Path(folder).name}`.",
    )
    report.metrics.update({k: round(v, 4) for k, v in ev.items()})
    report.metrics["final_loss"] = round(sum(info["losses"][-50:]) / min(50, len(info["losses"])), 4)
    report.metrics.update(provenance or {})
    rows = [
        [
            name.removeprefix("zeroshot_"),
            round(100 * v, 1),
            round(100 * ev[f"chance_{name.removeprefix('zeroshot_')}"], 1),
        ]
        for name, v in ev.items()
        if name.startswith("zeroshot_")
    ]
    report.add_table("Zero-shot top-1 accuracy (%) on held-out test splits", ["dataset", "accuracy", "chance"], rows,
                     note='Template "a photo of a {}."; class names of each dataset.')  # fmt: skip
    report.add_table(
        f"Retrieval on {round(1 / ev['retrieval_chance_r@1'])} held-out scenes (%), one caption per image",
        ["direction", "R@1", "R@5", "chance R@1", "chance R@5"],
        [
            [
                d,
                round(100 * ev[f"retrieval_{d}_r@1"], 1),
                round(100 * ev[f"retrieval_{d}_r@5"], 1),
                round(100 * ev["retrieval_chance_r@1"], 2),
                round(100 * ev["retrieval_chance_r@5"], 2),
            ]
            for d in ("i2t", "t2i")
        ],  # fmt: skip
        note="Captions name attributes, position and background; scenes sharing all of them make ties, so R@1 has a ceiling below 100.",
    )
    report.add_figure("loss.png", plots.loss_curve(info["losses"]), caption="InfoNCE loss per step")
    val = load_dataset("scenes", "val")
    report.add_figure(
        "scenes.png", plots.dataset_grid(val, list(range(12))), caption="scenes/val with boxes and a caption"
    )
    report.add_json("preset.json", preset)
    report.data = {"folder": str(folder), "eval": ev, "preset": preset}
    return report


def zero_shot_report(
    image: torch.Tensor,
    classnames: list[str],
    probs: list[float],
    template: str,
    unknown: list[str],
    truth: str | None = None,
) -> Report:
    """The image, the top classes' probabilities, and a bar chart; with ``truth`` (a dataset image's true class)
    whether the top class is right and the true class's rank and probability."""
    order = sorted(range(len(classnames)), key=lambda i: -probs[i])
    best = order[0]
    verdict = ""
    if truth is not None:
        if truth in classnames:
            rank = order.index(classnames.index(truth)) + 1
            verdict = (
                f" True label: **{truth}** — "
                + ("correct" if rank == 1 else f"wrong (the true class is ranked {rank})")
                + f", p(true) = {probs[classnames.index(truth)]:.3f}."
            )
        else:
            verdict = f" True label: **{truth}** (not among the candidate classes)."
    report = Report(
        title="Zero-shot classification",
        summary=f"Most likely: **{classnames[best]}** (p = {probs[best]:.3f}) among {len(classnames)} classes, "
        f'template "{template}".' + verdict,
    )
    if unknown:
        report.add_section("Unknown words", "Not in the backbone's vocabulary (read as `<unk>`): " + ", ".join(unknown))
    report.metrics["top1"] = classnames[best]
    report.metrics["top1_prob"] = round(probs[best], 4)
    if truth is not None:
        report.metrics["truth"] = truth
        report.metrics["correct"] = classnames[best] == truth
    report.add_table(
        "Class probabilities",
        ["class", "probability"] + (["true label"] if truth is not None else []),
        [
            [classnames[i], round(probs[i], 4)] + (["✓" if classnames[i] == truth else ""] if truth is not None else [])
            for i in order[:10]
        ],
    )
    report.add_image("input.png", image.permute(1, 2, 0).numpy(), caption="input at the model's resolution")
    report.add_figure(
        "probabilities.png", plots.probability_bars(classnames, probs), caption="softmax(logit_scale · cos)"
    )
    report.data = {"classnames": classnames, "probs": probs, "truth": truth}
    return report


def evidence(raw: dict) -> Evidence:
    """The page's headline claims: zero-shot top-1 accuracy per evaluation set and scene retrieval R@1 in both
    directions, each above chance, as shares of the test items (Wilson intervals over the items)."""
    ev = Evidence(raw)
    pct = {"scale": 100.0, "digits": 1, "unit": "%"}
    for name in raw["zeroshot"]:
        n = len(raw["zeroshot"][name])
        ev.headline(
            f"zero-shot top-1 on {name} beats chance", stat="proportion", a=f"zeroshot/{name}", null=f"chance/{name}",
            paper="— (the substrate of DOR, LADA, GMAIL)", context=f"{n} test images, {round(1 / raw['chance'][name])} "
            "classes", **pct,
        )  # fmt: skip
    for d, what in (("i2t", "image→text"), ("t2i", "text→image")):
        ev.headline(
            f"scene retrieval R@1 {what} beats chance", stat="proportion", a=f"retrieval/{d}", null="chance/retrieval",
            paper="—", context=f"{len(raw['retrieval'][d])} held-out scenes, one caption each", **pct,
        )  # fmt: skip
    return ev


def reproduction_report(report: Report, raw: dict, options: dict, *, command: str, seconds: float) -> Report:
    """``reproduce vlm``: the training report opened by the headline claims over every test item (``results.json``),
    with the Reading from their verdicts and the command; the metric tiles stay with the job."""
    ev = evidence(raw)
    counts = ev.counts()
    report.summary += (
        f" Headline claims: {counts['holds']} hold, {counts['fails']} fail, {counts['not resolved']} not resolved "
        "(shares of the test items against chance, 95 % Wilson intervals)."
    )
    report.metrics = {}
    rows = {h.claim: h.result for h in ev.headlines}
    above = [n for n in raw["zeroshot"] if rows[f"zero-shot top-1 on {n} beats chance"]["low"] > raw["chance"][n] + 0.2]
    near = [n for n in raw["zeroshot"] if n not in above]
    weak = [c.removeprefix("zero-shot top-1 on ").removesuffix(" beats chance") for c, r in rows.items()
            if c.startswith("zero-shot") and r["verdict"] != "holds"]  # fmt: skip
    i2t = rows["scene retrieval R@1 image→text beats chance"]
    reading = (
        "Every evaluation set is classified above chance" if not weak else f"Not above chance: {', '.join(weak)}"
    ) + (
        f"; the interval's lower end is more than 20 points above chance on {', '.join(above) or 'no set'}"
        + (f", less on {', '.join(near)}" if near else "")
        + ". The tiny CLIP knows a few hundred caption words and a synthetic world of shapes, so it is far from real "
        "CLIP; what the VLM methods need from it is a frozen image tower and a text tower that place class names — "
        "and, through the frozen MiniLM word vectors, words never seen in a caption — in one space. Retrieval R@1 "
        f"({100 * i2t['estimate']:.1f}% image→text, {i2t['verdict']} against chance) is bounded by scenes that share "
        "every captioned attribute. One trained model (one seed): the intervals cover the test items, not training "
        "variation."
    )
    report.sections.insert(0, ev.section())
    report.sections.insert(1, Section(title="Reading", markdown=reading))
    report.add_section("Command", f"`{command}` — {seconds:.0f} s. {provenance_line(threads=options['threads'])}")
    report.add_json("results.json", ev.to_json(options=options), caption="every test item's hit and the headline specs")
    return report
