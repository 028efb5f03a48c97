"""RF-Solver runs: the studies behind ``paperworks reproduce rf_solver`` (spec §6–§7), the two reproductions,
and the bodies of the ``rf.edit`` / ``rf.reconstruct`` jobs (images resolved, models loaded or trained).

1. :func:`analytic_study`: error vs NFE on the Gaussian and the mixture flows, Euler vs
   RF-Solver-2 (and order 3) at equal NFE, observed orders, round trips.
2. :func:`reconstruction_study`: invert-then-sample MSE/PSNR/SSIM of a trained model for
   N ∈ {5, 10, 25}, RF-Solver-2 (N steps) vs Euler (2N steps, equal NFE) and Euler (N steps).
3. :func:`edit_tradeoff`: digits edited from label a to label b, target-label accuracy (logistic
   regression scorer) and pixel MSE to the source as the number of injected steps k grows.
4. :func:`edit_ablation`: the RF-Edit grid (V keys × CFG handling × blocks).

Every study keeps its per-item values (each image's MSE and target hit, each sample's order), which the
reproductions hand to :mod:`methods.rf_solver.report` (it builds the Reports and ``results.json``).
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from core.device import autocast, device_provenance, resolve_device
from core.jobs import JobContext, Report
from core.provenance import provenance_line
from methods.rf_solver import report as reports
from methods.rf_solver.analytic import default_gaussian, default_mixture, reference_solve
from methods.rf_solver.checkpoints import get_model, train_info
from methods.rf_solver.config import PRESETS, get_preset
from methods.rf_solver.convergence import (
    ErrorPoint,
    equal_nfe_errors,
    gaussian_errors,
    observed_order,
    round_trip_error,
)
from methods.rf_solver.data import image_to_tensor, load_digits_split, photo_crops
from methods.rf_solver.edit import DiTVelocity, EditableModel, edit_sweep, reconstruct_image, rf_edit
from methods.rf_solver.metrics import mse, summary
from methods.rf_solver.model import count_params
from methods.rf_solver.results import (
    ABLATION_BLOCKS,
    ABLATION_CFG,
    ABLATION_KEYS,
    AblationResult,
    AnalyticResult,
    ReconRow,
    TradeoffResult,
)
from methods.rf_solver.schedule import get_schedule
from methods.rf_solver.scorer import digit_scorer
from methods.rf_solver.solver import solve, steps_for_nfe

log = logging.getLogger(__name__)

EXAMPLES = ("boy.jpg", "hiking.jpg", "horse.jpg")
MAX_IMAGE_BYTES = 20 * 1024 * 1024


def preset_for_labels(model: str, *labels: str) -> str:
    """ "auto" → the preset whose label set contains every label; otherwise check ``model``'s labels."""
    names = [model] if model != "auto" else [n for n in ("digits", "photo")]
    for name in names:
        if all(lab in PRESETS[name].model.labels for lab in labels):
            return name
    known = {n: list(PRESETS[n].model.labels) for n in ("digits", "photo")}
    raise ValueError(f"labels {list(labels)} do not belong to one model; known labels: {known}")


def resolve_image(
    *, image_sha256: str | None, digit_index: int | None, example: str | None, size: int, channels: int
) -> torch.Tensor:
    """The (1, C, size, size) image in [−1, 1] named by exactly one of the three references."""
    given = [x is not None for x in (image_sha256, digit_index, example)]
    if sum(given) != 1:
        raise ValueError("give exactly one of image_sha256, digit_index, example")
    if image_sha256 is not None:
        from core.artifacts import get_artifact_store

        data = get_artifact_store().read(image_sha256)
        if len(data) > MAX_IMAGE_BYTES:
            raise ValueError("image too large")
        return image_to_tensor(data, size, channels)
    if digit_index is not None:
        if channels != 1 or size != 16:
            raise ValueError("digit_index needs digit labels (0-9)")
        return load_digits_split("test").images[digit_index : digit_index + 1]
    if example not in EXAMPLES:
        raise ValueError(f"unknown example {example!r}; known: {', '.join(EXAMPLES)}")
    from core.config import get_settings

    path = Path(get_settings().data_dir) / "rf_edit_examples" / "source" / example
    if not path.is_file():
        raise FileNotFoundError(f"example image not found at {path}")
    return image_to_tensor(path, size, channels)


def load_velocity_model(preset: str, progress: JobContext, *, device: Any = "cpu", amp: str = "off") -> DiTVelocity:
    """The preset's trained model on ``device`` (trained there first when it is not cached)."""
    steps = PRESETS[preset].train.steps
    model, _ = get_model(
        preset,
        callbacks=(lambda s, _l: progress(s / steps, f"training the {preset} model"),),
        device=device,
        amp=amp,
    )
    return DiTVelocity(model.to(resolve_device(device)))


ANALYTIC_NFES = (8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)


def _slope_in(points: list[ErrorPoint], lo: int, hi: int) -> float:
    sel = [p for p in points if lo <= p.nfe <= hi and p.error > 0]
    return observed_order(sel)


def analytic_study(n_points: int = 2000, seed: int = 0, nfes: Sequence[int] = ANALYTIC_NFES) -> AnalyticResult:
    """Max-abs inversion error vs NFE for orders 1–3, with and without the FLUX shift (L = 256)."""
    g = torch.Generator().manual_seed(seed)
    gauss, mog = default_gaussian(), default_mixture()
    xg, xm = gauss.draw(n_points, g), mog.draw(n_points // 4, g)
    ref = reference_solve(mog, xm, 0.0, 1.0, 2000)  # the RK4 endpoint (what mixture_errors computes): once
    curves = {
        "gauss": gaussian_errors(gauss, xg, nfes, (1, 2, 3)),
        "gauss_shift": gaussian_errors(gauss, xg, nfes, (1, 2, 3), shift=True),
        "mog": equal_nfe_errors(mog, xm, ref, nfes, (1, 2, 3), "invert"),
    }
    # Orders fitted over NFE 16..256 on the Gaussians (spec §7.3) and over RF-Solver-2's
    # N ∈ [16, 128], i.e. NFE 32..256, on the mixture (spec §7.4).
    lo = {"gauss": 16, "gauss_shift": 16, "mog": 32}
    slopes = {name: {o: _slope_in(pts, lo[name], 256) for o, pts in c.items()} for name, c in curves.items()}
    fit = [n for n in nfes if 32 <= n <= 256]
    sample_orders = {"mog": {o: per_sample_orders(mog, xm, ref, fit, o) for o in (1, 2)}}
    trips = []
    for nfe in (16, 32, 64):
        trips.append(
            {
                "nfe_per_direction": nfe,
                "euler": round_trip_error(mog, xm, nfe, 1),
                "rf_solver2": round_trip_error(mog, xm, nfe, 2),
            }
        )
    return AnalyticResult(curves, slopes, trips, sample_orders)


def per_sample_orders(
    velocity: Any, x0: torch.Tensor, exact: torch.Tensor, nfes: Sequence[int], order: int
) -> list[float]:
    """Each sample's observed order: −slope of log |its inversion error| vs log NFE over ``nfes`` (equal NFE)."""
    errs, used = [], []
    for nfe in nfes:
        n = steps_for_nfe(nfe, order)
        if n is None:
            continue
        res = solve(velocity, x0, get_schedule(n, 256, False), order, "invert")
        errs.append((res.z - exact).abs().flatten(1).max(1).values.double().clamp_min(1e-300).numpy())
        used.append(res.nfe)
    logs = np.log(np.stack(errs))  # (n_nfe, n_samples)
    lx = np.log(np.asarray(used, float))
    lx = lx - lx.mean()
    slopes = (lx[:, None] * (logs - logs.mean(0))).sum(0) / (lx**2).sum()
    return [float(-v) for v in slopes]


def _device(model: EditableModel) -> torch.device:
    """The model's device (``DiTVelocity.device``); the CPU for models that do not say."""
    return getattr(model, "device", None) or torch.device("cpu")


def reconstruction_study(
    model: EditableModel,
    images: torch.Tensor,
    labels: torch.Tensor,
    dataset: str,
    step_counts: Sequence[int] = (5, 10, 25),
    shift: bool = True,
) -> list[ReconRow]:
    """RF-Solver-2 (N) vs Euler (2N, equal NFE) vs Euler (N, equal steps) for each N."""
    rows = []
    for n in step_counts:
        for name, order, steps in (
            ("RF-Solver-2", 2, n),
            ("Euler (equal NFE)", 1, 2 * n),
            ("Euler (equal steps)", 1, n),
        ):
            t0 = time.perf_counter()
            rec, _, nfe = reconstruct_image(model, images.to(_device(model)), labels, steps, order, shift)
            rec = rec.float().cpu()
            sec = time.perf_counter() - t0
            m = summary(rec, images)
            per = [float(v) for v in mse(rec, images)]
            rows.append(ReconRow(dataset, name, steps, nfe, m["mse"], m["psnr"], m["ssim"], sec, per))
            log.info("%s %s N=%d: mse %.3g", dataset, name, steps, m["mse"])
    return rows


def injection_reconstruction_check(
    model: EditableModel,
    images: torch.Tensor,
    labels: torch.Tensor,
    num_steps: int = 10,
    ks: Sequence[int] = (0, 1, 2, 5, 10),
    per_image: dict[int, list[float]] | None = None,
) -> dict[int, float]:
    """Spec §7.6: same prompt, guidance 1, reconstruction MSE as the injected steps k grow (k = N included).

    ``per_image``, when given, receives each image's MSE per k.
    """
    out = {}
    for k in ks:
        res = rf_edit(model, images.to(_device(model)), labels, labels, num_steps=num_steps, inject_k=k, guidance=1.0)
        per = mse(res.edited.float().cpu(), images)
        out[k] = float(per.mean())
        if per_image is not None:
            per_image[k] = [float(v) for v in per]
    return out


def edit_tradeoff(
    model: EditableModel,
    images: torch.Tensor,
    labels: torch.Tensor,
    ks: Sequence[int],
    num_steps: int = 15,
    guidance: float = 2.0,
    seed: int = 0,
    batch: int = 25,
) -> TradeoffResult:
    """Edit every image to a random other digit for each k; score with the logistic-regression scorer."""
    g = torch.Generator().manual_seed(seed)
    targets = (labels + torch.randint(1, 10, labels.shape, generator=g)) % 10
    scorer = digit_scorer()
    edits: dict[int, list[torch.Tensor]] = {k: [] for k in ks}
    for i in range(0, len(labels), batch):
        sl = slice(i, i + batch)
        res = edit_sweep(
            model, images[sl].to(_device(model)), labels[sl], targets[sl], ks, num_steps=num_steps, guidance=guidance
        )
        for k in ks:
            edits[k].append(res[k].float().cpu())
    tacc, sacc, mses, sems = [], [], [], []
    per_hits: dict[int, list[int]] = {}
    per_mse: dict[int, list[float]] = {}
    for k in ks:
        x = torch.cat(edits[k])
        per = mse(x, images).numpy()
        per_hits[k] = [int(v) for v in scorer.predict(x) == targets.numpy()]
        per_mse[k] = [float(v) for v in per]
        tacc.append(scorer.accuracy(x, targets))
        sacc.append(scorer.accuracy(x, labels))
        mses.append(float(per.mean()))
        sems.append(float(per.std(ddof=1) / np.sqrt(len(per))))
    return TradeoffResult(
        list(ks),
        tacc,
        sacc,
        mses,
        sems,
        len(labels),
        num_steps,
        guidance,
        examples={k: torch.cat(edits[k])[:8] for k in ks},
        sources=images[:8],
        targets=targets,
        hits=per_hits,
        mses=per_mse,
    )


# --- RF-Edit ablation grid (issue #13) -------------------------------------------------------------


def edit_ablation(
    model: EditableModel,
    images: torch.Tensor,
    labels: torch.Tensor,
    ks: Sequence[int] = (0, 2, 15),
    num_steps: int = 15,
    guidance: float = 2.0,
    seed: int = 0,
    batch: int = 50,
    recon_steps: int = 10,
    progress: Any = None,
) -> AblationResult:
    """The RF-Edit grid {keys} × {CFG handling} × {blocks}, every image edited to a random other digit.

    Same targets as :func:`edit_tradeoff` for the same ``seed``. For each (keys, blocks) one
    inversion per batch serves every k and CFG variant; the same-label reconstruction (§7.6,
    guidance 1, k ∈ {0, N}) is measured per (keys, blocks) on the same images.
    """
    if 0 not in ks:
        raise ValueError("ks must include 0 (the no-injection reference)")
    t_start = time.perf_counter()
    g = torch.Generator().manual_seed(seed)
    targets = (labels + torch.randint(1, 10, labels.shape, generator=g)) % 10
    scorer = digit_scorer()
    from methods.rf_solver.edit import resolve_blocks

    variants = [(half, guidance if gv is None else gv) for _, half, gv in ABLATION_CFG]
    hits: dict[tuple[str, str, str, int], list[np.ndarray]] = {}
    mses: dict[tuple[str, str, str, int], list[np.ndarray]] = {}
    recon: dict[tuple[str, str, int], list[np.ndarray]] = {}
    pairs = [(kk, b) for kk in ABLATION_KEYS for b in ABLATION_BLOCKS]
    starts = list(range(0, len(labels), batch))
    injected = [k for k in ks if k > 0]
    total, done = len(starts) * (len(pairs) + 1), 0
    for i in starts:
        sl = slice(i, i + batch)
        x, y, tgt = images[sl], labels[sl], targets[sl]
        x_dev = x.to(_device(model))

        def score(
            out: torch.Tensor, keys: str, name: str, blocks: str, k: int, x=x, tgt=tgt
        ) -> None:  # bound per batch
            out = out.float().cpu()
            hits.setdefault((keys, name, blocks, k), []).append(scorer.predict(out) == tgt.numpy())
            mses.setdefault((keys, name, blocks, k), []).append(mse(out, x).numpy())

        # k = 0 injects nothing: one sample per guidance, shared by every (keys, blocks) cell
        if progress is not None:
            progress(done / total, "ablation: k = 0")
        base = edit_sweep(model, x_dev, y, tgt, (0,), num_steps=num_steps, variants=variants)
        rec0 = mse(
            rf_edit(model, x_dev, y, y, num_steps=recon_steps, inject_k=0, guidance=1.0).edited.float().cpu(), x
        ).numpy()
        done += 1
        for keys, blocks in pairs:
            if progress is not None:
                progress(done / total, f"ablation: V keys {keys}, blocks {blocks}")
            res = edit_sweep(
                model, x_dev, y, tgt, injected, num_steps=num_steps, blocks=blocks, keying=keys, variants=variants
            )
            for (name, _, _), (half, gv) in zip(ABLATION_CFG, variants, strict=True):
                score(base[(0, half, gv)], keys, name, blocks, 0)
                for k in injected:
                    score(res[(k, half, gv)], keys, name, blocks, k)
            r = rf_edit(
                model,
                x_dev,
                y,
                y,
                num_steps=recon_steps,
                inject_k=recon_steps,
                guidance=1.0,
                blocks=blocks,
                keying=keys,
            )
            recon.setdefault((keys, blocks, 0), []).append(rec0)
            recon.setdefault((keys, blocks, recon_steps), []).append(mse(r.edited.float().cpu(), x).numpy())
            done += 1
    cat = lambda d: {key: np.concatenate(v) for key, v in d.items()}  # noqa: E731
    return AblationResult(
        ks=list(ks),
        num_steps=num_steps,
        guidance=guidance,
        num_images=len(labels),
        hits=cat(hits),
        mses=cat(mses),
        recon=cat(recon),
        recon_ks=[0, recon_steps],
        blocks={b: list(resolve_blocks(model, b)) for b in ABLATION_BLOCKS},
        seconds=time.perf_counter() - t_start,
    )


# --- the jobs' bodies ------------------------------------------------------------------------------


def edit(
    x0: torch.Tensor,
    preset: str,
    source: str,
    target: str,
    *,
    steps: int,
    inject: int,
    order: int,
    guidance: float,
    shift: bool,
    offload: bool,
    progress: JobContext,
    v_keys: str = "interval",
    cfg_halves: str = "both",
    blocks: str = "all",
    device: Any = "cpu",
    amp: str = "off",
) -> Report:
    """Reconstruct and edit ``x0`` (``rf.edit``); ``v_keys``, ``cfg_halves``, ``blocks``: the ablation options."""
    dev = resolve_device(device)
    model = load_velocity_model(preset, progress.sub(0.0, 0.6), device=dev, amp=amp)
    x_dev = x0.to(dev)
    progress(0.65, "reconstructing")
    t0 = time.perf_counter()
    with autocast(dev, amp):
        rec, _, rec_nfe = reconstruct_image(model, x_dev, source, steps, order, shift)
    rec = rec.float().cpu()
    t_rec = time.perf_counter() - t0
    progress(0.8, "editing")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rf-vcache-") as tmp, autocast(dev, amp):
        res = rf_edit(
            model,
            x_dev,
            source,
            target,
            num_steps=steps,
            inject_k=inject,
            order=order,
            guidance=guidance,
            shift=shift,
            offload_dir=Path(tmp) if offload else None,
            keying=v_keys,  # type: ignore[arg-type]
            cfg_halves=cfg_halves,  # type: ignore[arg-type]
            blocks=blocks,
        )
    edited = res.edited.float().cpu()
    t_edit = time.perf_counter() - t0
    report = reports.edit_report(
        x0,
        rec,
        edited,
        preset=preset,
        source=source,
        target=target,
        steps=steps,
        inject=inject,
        order=order,
        guidance=guidance,
        costs={
            "recon_nfe": rec_nfe,
            "edit_nfe": res.nfe,
            "cached_v_tensors": res.cached_tensors,
            "cache_mb": round(res.cache_bytes / 1e6, 3),
            "recon_seconds": round(t_rec, 3),
            "edit_seconds": round(t_edit, 3),
            **device_provenance(dev, amp),
        },
        timesteps=res.timesteps,
    )
    progress(1.0, "done")
    return report


def reconstruct(
    x0: torch.Tensor,
    preset: str,
    label: str,
    *,
    nfes: list[int],
    shift: bool,
    progress: JobContext,
    device: Any = "cpu",
    amp: str = "off",
) -> Report:
    """Reconstruction error vs NFE per direction for Euler and RF-Solver-2 (equal NFE) (``rf.reconstruct``)."""
    dev = resolve_device(device)
    model = load_velocity_model(preset, progress.sub(0.0, 0.5), device=dev, amp=amp)
    x_dev = x0.to(dev)
    rows, images = [], []
    for i, nfe in enumerate(nfes):
        progress(0.5 + 0.5 * i / len(nfes), f"NFE {nfe}")
        for solver, order in (("Euler (equal NFE)", 1), ("RF-Solver-2", 2)):
            n = nfe // order
            t0 = time.perf_counter()
            with autocast(dev, amp):
                rec, _, total = reconstruct_image(model, x_dev, label, n, order, shift)
            rec = rec.float().cpu()
            m = summary(rec, x0)
            rows.append(
                {
                    "dataset": "input",
                    "solver": solver,
                    "steps": n,
                    "nfe": total,
                    **m,
                    "seconds": time.perf_counter() - t0,
                }
            )
            if nfe == nfes[-1] or nfe == nfes[0]:
                images.append(rec)
    report = reports.reconstruct_report(x0, images, rows, preset=preset, label=label, nfes=nfes)
    report.metrics.update(device_provenance(dev, amp))
    progress(1.0, "done")
    return report


# --- the reproductions -----------------------------------------------------------------------------

EDIT_KS = (0, 1, 2, 3, 4, 6, 8, 11, 15)


def _model(
    name: str, progress: JobContext, device: Any = "cpu", amp: str = "off"
) -> tuple[DiTVelocity, dict[str, Any]]:
    """The preset's model (trained when not cached) and what the report says about it."""
    progress(0.0, f"loading or training the {name} model")
    preset = get_preset(name)
    model, folder = get_model(
        preset,
        callbacks=(lambda s, _l: progress(s / preset.train.steps, f"train {name}"),),
        device=device,
        amp=amp,
    )
    info = train_info(folder)
    losses = info.get("losses", [])
    about = {
        "config": {"folder": str(folder), "model": preset.model.to_dict(), "train": preset.train.to_dict()},
        "row": [
            name,
            count_params(model),
            preset.train.steps,
            preset.train.batch_size,
            round(info.get("seconds", 0.0)),
            sum(losses[-100:]) / max(1, len(losses[-100:])),
        ],
    }
    return DiTVelocity(model), about


def _example_images(data_dir: Path, size: int) -> tuple[list[str], torch.Tensor | None]:
    folder = data_dir / "rf_edit_examples" / "source"
    files = sorted(folder.glob("*.jpg")) if folder.is_dir() else []
    if not files:
        return [], None
    return [f.name for f in files], torch.cat([image_to_tensor(f, size, 3) for f in files])


def run_reproduction(
    progress: JobContext,
    *,
    n_recon: int = 64,
    n_edit: int = 50,
    threads: int = 0,
    ablation: bool = False,
    digits_model: str = "digits_long",
    device: str = "cpu",
    amp: str = "off",
    command: str = "paperworks reproduce rf_solver",
) -> Report:
    """Run every study and build the report (written as ``rf_solver.md`` + ``rf_solver/`` by the registry).

    ``device``/``amp``: where the models train (when not cached) and the solves run; the analytic
    flows, the metrics and the scorer stay on the CPU.
    """
    from core.config import get_settings

    dev = resolve_device(device)
    if threads > 0:
        torch.set_num_threads(threads)
    start = time.perf_counter()
    progress(0.0, "analytic flows")
    ana = analytic_study()
    digits, d_about = _model(digits_model, progress.sub(0.1, 0.45), dev, amp)
    photo, p_about = _model("photo", progress.sub(0.45, 0.7), dev, amp)
    inj_per: dict[int, list[float]] = {}
    with autocast(dev, amp):  # the solves (the models are on dev)
        progress(0.7, "reconstruction")
        test = load_digits_split("test")
        crops, crop_labels = photo_crops(32, 32, generator=torch.Generator().manual_seed(0), holdout=True)
        recon = reconstruction_study(digits, test.images[:n_recon], test.labels[:n_recon], "digits (held out)")
        recon += reconstruction_study(photo, crops, crop_labels, "photo crops (held-out region)")
        names, examples = _example_images(Path(get_settings().data_dir), 32)
        if examples is not None:  # real photos never seen in training, reconstructed under the label "china"
            recon += reconstruction_study(
                photo, examples, torch.zeros(len(names), dtype=torch.long), "rf_edit_examples 32×32"
            )
        inj = injection_reconstruction_check(digits, test.images[:n_recon], test.labels[:n_recon], per_image=inj_per)
        progress(0.8, "edit trade-off")
        sl = slice(n_recon, n_recon + n_edit)
        tr = edit_tradeoff(digits, test.images[sl], test.labels[sl], EDIT_KS)
        c_src, _ = photo_crops(4, 32, generator=torch.Generator().manual_seed(1), holdout=True)
        sweep = edit_sweep(photo, c_src.to(dev), "china", "flower", (0, 2, 5, 15), num_steps=15, guidance=2.0)
        sweep = {k: v.float().cpu() for k, v in sweep.items()}
        ab = None
        if ablation:
            progress(0.85, "RF-Edit ablation grid")
            ab = edit_ablation(digits, test.images[sl], test.labels[sl], progress=progress.sub(0.85, 0.99))
    report = reports.reproduction_report(
        ana,
        recon,
        inj,
        inj_per,
        tr,
        ab,
        models=[d_about, p_about],
        photo_sources=c_src,
        photo_sweep=sweep,
        info={
            "command": command,
            "seconds": round(time.perf_counter() - start, 1),
            "machine": provenance_line(),
            "n_recon": n_recon,
            "n_edit": n_edit,
            "digits_model": digits_model,
            "scorer_heldout_acc": digit_scorer().held_out_accuracy(),
            **device_provenance(dev, amp),
        },
    )
    progress(1.0, "done")
    return report


def run_ablation_reproduction(
    progress: JobContext,
    *,
    offset: int = 64,
    n_edit: int = 50,
    threads: int = 0,
    preset: str = "digits_long",
    device: str = "cpu",
    amp: str = "off",
    command: str = "paperworks reproduce rf_solver_ablation",
) -> Report:
    """The RF-Edit ablation grid on its own (``paperworks reproduce rf_solver_ablation``), solved on ``device``."""
    dev = resolve_device(device)
    if threads > 0:
        torch.set_num_threads(threads)
    start = time.perf_counter()
    digits, about = _model(preset, progress.sub(0.0, 0.3), dev, amp)
    test = load_digits_split("test")
    sl = slice(offset, offset + n_edit)
    with autocast(dev, amp):
        ab = edit_ablation(digits, test.images[sl], test.labels[sl], progress=progress.sub(0.3, 0.98))
    report = reports.ablation_report(
        ab,
        about,
        info={
            "command": command,
            "preset": preset,
            "offset": offset,
            "n_edit": n_edit,
            "seconds": round(time.perf_counter() - start, 1),
            "machine": provenance_line(),
            "scorer_heldout_acc": digit_scorer().held_out_accuracy(),
            **device_provenance(dev, amp),
        },
    )
    progress(1.0, "done")
    return report
