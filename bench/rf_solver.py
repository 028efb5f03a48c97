"""Benchmark: reconstruction error reached per second of compute (Euler vs RF-Solver-2) and edit latency.

Run by hand: ``python bench/rf_solver.py [--threads 1] [--repeats 5]``; writes ``docs/bench/rf_solver.md``.
Uses the trained ``digits`` and ``photo`` models from the cache (trains them if missing).
Both measurements come from one run, side by side, on the same machine state.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import statistics
import time
from pathlib import Path

import torch

from methods.rf_solver.checkpoints import get_model
from methods.rf_solver.data import load_digits_split, photo_crops
from methods.rf_solver.edit import DiTVelocity, reconstruct_image, rf_edit
from methods.rf_solver.metrics import mse

OUT = Path(__file__).resolve().parents[1] / "docs" / "bench" / "rf_solver.md"
STEP_COUNTS = (2, 3, 5, 8, 12, 20, 30)


def _timed(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def recon_per_second(model: DiTVelocity, x: torch.Tensor, y: torch.Tensor, repeats: int) -> list[dict]:
    """For each N: RF-Solver-2 with N steps and Euler with 2N steps (equal NFE), median wall seconds."""
    rows = []
    for n in STEP_COUNTS:
        for solver, order, steps in (("Euler", 1, 2 * n), ("RF-Solver-2", 2, n)):
            sec, (rec, _, nfe) = _timed(lambda: reconstruct_image(model, x, y, steps, order), repeats)
            rows.append(
                {"solver": solver, "steps": steps, "nfe": nfe, "seconds": sec, "mse": float(mse(rec, x).mean())}
            )
    return rows


def seconds_to_reach(rows: list[dict], solver: str, target: float) -> float | None:
    """Smallest measured time at which ``solver`` reached MSE ≤ target (None if never)."""
    ok = [r["seconds"] for r in rows if r["solver"] == solver and r["mse"] <= target]
    return min(ok) if ok else None


def edit_latency(model: DiTVelocity, x: torch.Tensor, repeats: int, tmp: Path) -> list[dict]:
    rows = []
    for name, kw in (
        ("RF-Solver-2, k=2, cache in memory", {"order": 2}),
        ("RF-Solver-2, k=2, cache on disk", {"order": 2, "offload_dir": tmp}),
        ("Euler, k=2 (half the NFE)", {"order": 1}),
    ):
        sec, res = _timed(
            lambda: rf_edit(model, x, "china", "flower", num_steps=15, inject_k=2, guidance=2.0, **kw), repeats
        )
        rows.append(
            {
                "setting": name,
                "seconds": sec,
                "nfe": res.nfe,
                "cached": res.cached_tensors,
                "cache_kb": res.cache_bytes / 1024,
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch default)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--images", type=int, default=32)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    if args.threads:
        torch.set_num_threads(args.threads)
    digits = DiTVelocity(get_model("digits")[0])
    photo = DiTVelocity(get_model("photo")[0])
    test = load_digits_split("test")
    x, y = test.images[: args.images], test.labels[: args.images]
    load_before = os.getloadavg()[0]
    rec_rows = recon_per_second(digits, x, y, args.repeats)
    crop, _ = photo_crops(1, 32, generator=torch.Generator().manual_seed(0), holdout=True)
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / "rf-bench-vcache"
    edit_rows = edit_latency(photo, crop, max(args.repeats, 5), tmp)
    load_after = os.getloadavg()[0]

    lines = [
        "# RF-Solver benchmark",
        "",
        f"Command: `python bench/rf_solver.py --threads {args.threads} --repeats {args.repeats}` · "
        f"{platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__} with "
        f"{torch.get_num_threads()} threads · 1-min load average {load_before:.1f} before, "
        f"{load_after:.1f} after (the machine is shared; times are medians of {args.repeats} runs).",
        "",
        f"## Reconstruction error per second of compute (digits model, {len(y)} held-out images, batch)",
        "",
        "Invert then sample with the same label; Euler with 2N steps and RF-Solver-2 with N steps use the same NFE.",
        "",
        "| solver | steps/direction | NFE (both directions) | seconds | MSE | log10(1/MSE) per second |",
        "|---|---|---|---|---|---|",
    ]
    import math

    for r in rec_rows:
        lines.append(
            f"| {r['solver']} | {r['steps']} | {r['nfe']} | {r['seconds']:.3f} | {r['mse']:.3e} | "
            f"{math.log10(1 / max(r['mse'], 1e-12)) / r['seconds']:.2f} |"
        )
    lines += [
        "",
        "Time to reach a reconstruction MSE (smallest measured configuration that reaches it):",
        "",
        "| target MSE | Euler seconds | RF-Solver-2 seconds | speed-up |",
        "|---|---|---|---|",
    ]
    for target in (1e-2, 3e-3, 1e-3, 3e-4, 1e-4):
        e, r = seconds_to_reach(rec_rows, "Euler", target), seconds_to_reach(rec_rows, "RF-Solver-2", target)
        speed = f"{e / r:.1f}×" if e and r else ("Euler never reaches it" if r else "—")
        lines.append(f"| {target:g} | {e if e is None else f'{e:.3f}'} | {r if r is None else f'{r:.3f}'} | {speed} |")
    lines += [
        "",
        "## Edit latency, one 32×32 image, N = 15 (photo model, china → flower, guidance 2)",
        "",
        "| setting | seconds | NFE | V tensors cached | cache KiB |",
        "|---|---|---|---|---|",
    ]
    for r in edit_rows:
        lines.append(f"| {r['setting']} | {r['seconds']:.3f} | {r['nfe']} | {r['cached']} | {r['cache_kb']:.0f} |")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    logging.getLogger(__name__).info("wrote %s", OUT)


if __name__ == "__main__":
    main()
