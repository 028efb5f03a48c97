"""The ``patch_scaling`` runs: every (backbone, p, seed) trained (as sub-jobs or here, each cached), the sweep,
the §7 implementation checks computed on tiny tensors, and the logistic-regression reference.

:func:`run_reproduction` trains the main sweep (``image_size``, ``patches``) and, when ``variant_size`` is set,
the same backbones, seeds and epochs at that size with ``variant_patches`` (the 16×16 variant where one p = 16
token must hold 256 pixels in d = 64), plus the optional longer runs; :mod:`methods.patch_scaling.report`
builds the Report (headline claims from every seed's accuracy) and ``results.json``.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from core.jobs import JobContext, Report
from core.provenance import provenance_line
from methods.patch_scaling.report import reproduction_report, run_devices

PARAMS_DEVICES = ("cpu", "auto", "cuda")


def _on_device(run: dict[str, Any], options: Any) -> dict[str, Any]:
    """A run's params with the sweep's ``device`` and ``amp``.

    A device the params cannot name (a library caller's ``"cuda:1"``, the tests' ``lazy``) is validated as
    ``cpu`` and given to the in-process runs by :func:`run_list` (sub-jobs cannot carry it).
    """
    device = options.device if str(options.device) in PARAMS_DEVICES else "cpu"
    return {**run, "device": device, "amp": options.amp}


def run_all(options: Any, progress: JobContext) -> list[dict[str, Any]]:
    """One result dict per (backbone, p, seed): sub-jobs when a worker is configured, else in-process."""
    runs = [
        _on_device(
            {"backbone": b, "patch": p, "seed": s, "image_size": options.image_size, "epochs": options.epochs},
            options,
        )
        for b in options.backbones
        for p in options.patches
        for s in range(options.seeds)
    ]
    return run_list(runs, options.dispatch, progress, device=options.device)


def longer_runs(options: Any, progress: JobContext) -> list[dict[str, Any]]:
    """p = max(patches) and p = 1 at ``longer_epochs`` for ``longer_seeds`` seeds ([] when off)."""
    if not options.longer_epochs:
        return []
    ends = sorted({max(options.patches), 1}, reverse=True)
    runs = [
        _on_device(
            {"backbone": b, "patch": p, "seed": s, "image_size": options.image_size, "epochs": options.longer_epochs},
            options,
        )
        for b in options.backbones
        for p in ends
        for s in range(options.longer_seeds)
    ]
    return run_list(runs, options.dispatch, progress, device=options.device)


def run_list(
    runs: list[dict[str, Any]], dispatch: str, progress: JobContext, *, device: Any = None
) -> list[dict[str, Any]]:
    """Train every run of ``runs`` (``patch_scaling.train`` params; cached per run), as sub-jobs when a worker is
    configured (:func:`core.jobs.dispatch.map_jobs`).

    Each sub-job carries its run's ``device`` and ``amp`` (so it is routed where they say). A
    sub-job still queued after a minute is run here only when it asked for the CPU: a GPU job is
    never pulled back into this (possibly CPU-only) process. ``device``, when the params cannot name it
    (see :func:`_on_device`), is where the in-process runs train.
    """
    from core.jobs.dispatch import map_jobs

    override = device if device is not None and str(device) not in PARAMS_DEVICES else None

    on_cpu = all(r.get("device", "cpu") == "cpu" for r in runs)
    return map_jobs(
        "patch_scaling.train",
        runs,
        inline=lambda r, sub: _train_cached(r, sub, device=override),
        result=lambda data: data["result"],
        dispatch=dispatch,
        progress=progress,
        key="patch_scaling",
        timeout=12 * 3600,
        steal_after=60.0 if on_cpu else None,
    )


def _train_cached(r: Any, sub: JobContext, device: Any = None) -> dict[str, Any]:
    """One run in this process (its cached result when there is one), on ``device`` or its params' device."""
    from methods.patch_scaling.train import train_eval

    path = _cache_path(run_key(r))
    if path is not None and path.exists():
        sub(1.0, f"{r.backbone} p={r.patch} seed={r.seed}: cached")
        return {**json.loads(path.read_text()), "cached": True}
    res = train_eval(
        r.backbone,
        r.patch,
        r.seed,
        image_size=r.image_size,
        epochs=r.epochs,
        device=r.device if device is None else device,
        amp=r.amp,
        progress=sub,
    )
    if path is not None and res.get("device", "cpu").split(":")[0] in ("cpu", "cuda"):  # not test devices
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(res))
    return res


RECIPE_VERSION = 2  # bump when train_eval's recipe changes (2: DeiT no-decay groups, min lr 1e-5)


def run_key(params: Any) -> dict[str, Any]:
    """What identifies a finished run: its params without the device (a run is valid on any device);
    ``amp`` only when on (bf16 is another computation; fp32 keys stay those of the code before devices)."""
    key = params.model_dump(exclude={"device", "amp"})
    if params.amp != "off":
        key["amp"] = params.amp
    return key


def _cache_root() -> Path | None:
    from core.config import get_settings

    return get_settings().cache_dir


def _cache_path(params: dict[str, Any]) -> Path | None:
    """``<cache_dir>/patch_scaling/runs/<hash>.json``: one finished run, keyed by its params and the recipe.

    ``params`` is :func:`run_key`: a run trained on the CPU serves a GPU sweep and vice versa (each cached
    result records where it was trained).
    """
    cache = _cache_root()
    if cache is None:
        return None
    key = hashlib.sha256(json.dumps({**params, "recipe": RECIPE_VERSION}, sort_keys=True).encode()).hexdigest()[:16]
    return Path(cache) / "patch_scaling" / "runs" / f"{key}.json"


def run_reproduction(options: Any, progress: JobContext) -> Report:
    """Every run (sub-jobs or here, cached), the variant size when asked, the longer runs, then the Report."""
    from core.jobs.dispatch import use_jobs

    start = time.perf_counter()
    here: dict[str, str] = {}
    if not use_jobs(options.dispatch):  # the runs train here: a device this process lacks fails now
        from core.device import device_provenance, resolve_device

        here = device_provenance(resolve_device(options.device), options.amp)
    variant = getattr(options, "variant_size", 0)
    parts = 1 + bool(variant) + bool(options.longer_epochs)
    sweeps = [{"image_size": options.image_size, "patches": list(options.patches)}]
    if variant:
        sweeps.append({"image_size": variant, "patches": sorted(set(options.variant_patches), reverse=True)})
    for i, sw in enumerate(sweeps):
        opts = options.model_copy(update={"image_size": sw["image_size"], "patches": sw["patches"]})
        sw["results"] = run_all(opts, progress.sub(i / parts, (i + 1) / parts))
        sw["logreg"] = linear_baseline(sw["image_size"])
    longer = longer_runs(options, progress.sub((parts - 1) / parts, 1.0)) if options.longer_epochs else []
    unit = unit_checks(options.image_size, list(options.patches))
    runs = [r for sw in sweeps for r in sw["results"]] + longer
    cached = [r for r in runs if r.get("cached")]
    info = {
        "command": f"paperworks reproduce patch_scaling{options.cli_options()}"
        if hasattr(options, "cli_options")
        else "",
        "seconds": round(time.perf_counter() - start, 1),
        "machine": provenance_line(),
        "runs": len(runs),
        "cached": len(cached),
        "cached_train_s": round(sum(r["train_s"] for r in cached), 1),
        "where": here or run_devices(runs),
    }
    for r in runs:
        r.pop("cached", None)
    return reproduction_report(options, sweeps, longer, unit, info)


def unit_checks(image_size: int, patches: list[int]) -> list[list[Any]]:
    """Spec §7 checks 1–4 and 6, computed live on tiny tensors: [check, measured, passes]."""
    import torch

    from methods.patch_scaling.model import (
        AdventurerBlock,
        Mamba2Mixer,
        PatchEmbed,
        TinyAdventurer,
        flip_tokens,
        interpolate_pos_embed,
        patchify,
        unpatchify,
    )
    from paperworks_kernels.selective_scan import selective_scan_chunked, selective_scan_reference

    g = torch.Generator().manual_seed(0)
    rows: list[list[Any]] = []
    with torch.no_grad():
        x = torch.randn(2, 1, image_size, image_size, generator=g)
        counts = {p: PatchEmbed(image_size, p, 1, 8)(x).shape[1] for p in patches}
        rows.append(["7.1 tokens = (S/p)²", str(counts), all(n == (image_size // p) ** 2 for p, n in counts.items())])
        emb = PatchEmbed(image_size, 1, 1, 8)
        direct = x.permute(0, 2, 3, 1).reshape(2, -1, 1) @ emb.proj.weight[:, :, 0, 0].T + emb.proj.bias
        err = float((emb(x) - direct).abs().max())
        rows.append(["7.1 p = 1 conv = per-pixel linear map (max |Δ|)", f"{err:.1e}", err < 1e-5])
        worst = 0.0
        for p in patches:
            e = PatchEmbed(image_size, p, 1, p * p)
            e.proj.weight.copy_(torch.eye(p * p).reshape(p * p, 1, p, p))
            e.proj.bias.zero_()
            worst = max(worst, float((unpatchify(e(x), p, 1) - x).abs().max()))
            worst = max(worst, float((unpatchify(patchify(x, p), p, 1) - x).abs().max()))
        rows.append(["7.1 un-patchify(patchify(x)) = x, identity embedding (max |Δ|)", f"{worst:.1e}", worst < 1e-6])
        errs = {}
        for L in (1, 5, 64, 257):
            ops = {
                "u": torch.randn(2, 32, L, generator=g),
                "delta": torch.randn(2, 2, L, generator=g),
                "A": -torch.rand(2, generator=g) * 4 - 0.5,
                "B": torch.randn(2, 16, L, generator=g),
                "C": torch.randn(2, 16, L, generator=g),
                "D": torch.randn(2, generator=g),
                "delta_bias": torch.randn(2, generator=g) * 0.5,
                "delta_softplus": True,
            }
            ref = selective_scan_reference(**ops)
            errs[L] = float((selective_scan_chunked(**ops, chunk=7) - ref).abs().max())
        rows.append(
            [
                "7.2 chunked SSD scan (chunk 7) = sequential recurrence, L ∈ {1, 5, 64, 257} (max |Δ|)",
                f"{max(errs.values()):.1e}",
                max(errs.values()) < 1e-4,
            ]
        )
        torch.manual_seed(0)
        mixer = Mamba2Mixer(32, d_state=16, headdim=16, impl="chunked", chunk=5).eval()
        h = torch.randn(2, 13, 32, generator=g)
        h2 = h.clone()
        h2[:, 7] += 3.0
        y, y2 = mixer(h), mixer(h2)
        causal = bool(torch.equal(y[:, :7], y2[:, :7])) and float((y[:, 7:] - y2[:, 7:]).abs().max()) > 1e-3
        rows.append(["7.2 causality: changing token 7 leaves outputs 0–6 unchanged", "bit-identical", causal])
        rows.append(
            [
                "7.2 Triton kernel = sequential (TRITON_INTERPRET=1)",
                "run by tests/methods/patch_scaling/test_model.py",
                "tested",
            ]
        )
        t = torch.randn(2, 6, 4, generator=g)
        f = flip_tokens(t)
        inv = bool(torch.equal(flip_tokens(f), t) and torch.equal(f[:, -1], t[:, -1]))
        rows.append(["7.3 flip is an involution and keeps the class token last", "", inv])
        m = TinyAdventurer(patch=4, dim=16, depth=4, headdim=8, d_state=4)
        flipped = [i for i, blk in enumerate(m.blocks) if blk.flip]
        rows.append(["7.3 released rule flips exactly layers 2 and 3", str(flipped), flipped == [2, 3]])
        blk = AdventurerBlock(16, 0, "released", 0.0, d_state=4, headdim=8).eval()
        out = blk(torch.randn(3, 5, 16, generator=g))
        rows.append(
            [
                "7.4 mixer sees N + 2 tokens, block returns N + 1 (N = 4)",
                f"{blk.mixer_len} / {out.shape[1]}",
                blk.mixer_len == 6 and out.shape[1] == 5,
            ]
        )
        pos = torch.randn(1, 17, 8, generator=g)
        same = interpolate_pos_embed(pos, 4)
        ok = bool(torch.allclose(same, pos, atol=1e-6) and torch.equal(same[:, -1], pos[:, -1]))
        big = interpolate_pos_embed(pos, 8)
        ok_big = big.shape == (1, 65, 8) and bool(torch.equal(big[:, -1], pos[:, -1]))
        rows.append(["7.6 pos-embed 4×4 → 4×4 is the identity; class slot (last) kept exactly", "", ok])
        rows.append(["7.6 pos-embed 4×4 → 8×8 keeps the class slot", str(tuple(big.shape)), ok_big])
    return rows


def linear_baseline(image_size: int) -> float:
    """Test accuracy of multinomial logistic regression on all pixels of the same split (a strong reference)."""
    from sklearn.linear_model import LogisticRegression

    from methods.patch_scaling.data import load_split

    xtr, ytr, xte, yte = load_split(image_size)
    clf = LogisticRegression(max_iter=2000).fit(xtr.flatten(1).numpy(), ytr.numpy())
    return float(clf.score(xte.flatten(1).numpy(), yte.numpy()))
