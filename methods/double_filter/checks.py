"""Spec §7 checks 1–4 run on the real pretrained model (the reproducer's table); check 5 reads the experiment."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from methods.double_filter import ipf
from methods.double_filter.flops import model_flops
from methods.double_filter.ga import GAConfig, is_valid, run_ga
from methods.double_filter.tasks import build


def structural_checks(model, tok, *, rho: float = 0.5, n: int = 32) -> list[tuple[str, bool, str]]:
    """Checks 1–4 (IPF indices, ρ = 1 identity, positions, layer mask, FLOPs, GA) → (check, passed, detail).

    Runs on ``model``'s device.
    """
    out: list[tuple[str, bool, str]] = []
    dev = next(model.parameters()).device
    data = build("vqa", "val", n)
    tokens = tok(data.texts).to(dev)
    images = data.images.to(dev)
    N = model.n_patches
    keep, fgs = ipf.ipf_keep(model, data.images, data.boxes, rho)
    k = ipf.keep_count(rho, N)
    ok = all(
        len(r) == k and len(set(r.tolist())) == k and (np.diff(r) > 0).all() and r.min() >= 0 and r.max() < N
        for r in keep.numpy()
    )
    bg_ok = all((~f[r]).any() for r, f in zip(keep.numpy(), fgs, strict=True) if (~f).any())
    out.append(("1. IPF keeps exactly round(ρN) unique sorted in-range indices", ok, f"k = {k} of N = {N}, {n} images"))
    out.append(("1. ≥ 1 background patch kept whenever background exists", bg_ok, f"ρ = {rho}, r_fg = 0.8"))
    with torch.no_grad():
        txt, pad = model.encode_text(tokens)
        full = model.fuse(txt, pad, model.encode_image(images))
        keep1, _ = ipf.ipf_keep(model, data.images, data.boxes, 1.0)
        same = model.fuse(txt, pad, model.encode_image(images, keep1.to(dev)))
        out.append(("1. ρ = 1 output equals the unfiltered output", bool(torch.equal(full, same)), "bit-exact"))
        keep = keep.to(dev)
        emb_all = model.patch_tokens(images)
        emb_kept = model.patch_tokens(images, keep)
        pos_ok = torch.allclose(torch.gather(emb_all, 1, keep[..., None].expand(-1, -1, emb_all.shape[-1])), emb_kept)
        out.append(
            (
                "2. dropping patches keeps each kept patch's position embedding",
                bool(pos_ok),
                "embedding + position compared",
            )
        )
        ones = [1] * len(model.sublayers())
        model.set_genome(ones)
        again = model.fuse(txt, pad, model.encode_image(images))
        out.append(("3. all-ones genome reproduces the logits exactly", bool(torch.equal(full, again)), ""))
        blk = model.fusion[0]
        g = list(ones)
        i = [s.name for s in model.sublayers()].index("fusion.0.cross")
        g[i] = 0
        model.set_genome(g)
        skipped = model.fuse(txt, pad, model.encode_image(images))
        model.set_genome(ones)
        orig = blk.xattn.o.weight.data.clone(), blk.xattn.o.bias.data.clone()
        blk.xattn.o.weight.data.zero_()
        blk.xattn.o.bias.data.zero_()
        removed = model.fuse(txt, pad, model.encode_image(images))
        blk.xattn.o.weight.data, blk.xattn.o.bias.data = orig
        out.append(
            (
                "3. skipping a sub-layer = removing its residual branch",
                bool(torch.allclose(skipped, removed, atol=1e-6)),
                "fusion.0.cross vs zeroed branch",
            )
        )
    rng = np.random.default_rng(0)
    subs = model.sublayers()
    g = np.ones(len(subs), dtype=int)
    prev, mono = None, True
    for j in rng.permutation(len(subs)):
        f = model_flops(model.cfg, subs, g, kept_patches=N, n_txt=8)["total"]
        mono &= prev is None or f < prev
        prev = f
        g[j] = 0
    out.append(("3. FLOPs decrease monotonically as zeros are added", bool(mono), f"{len(subs)} sub-layers"))
    out += ga_checks([s.group for s in subs])
    return out


def elitism_holds(res, elite: int) -> bool:
    """Whether the ``elite`` fittest genomes of every generation are in the next one and the population's best
    fitness never drops (a GA without elitism, or one that mutates its elite, fails this)."""
    for now, nxt in zip(res.populations, res.populations[1:], strict=False):
        order = np.argsort([-res.cache[g] for g in now], kind="stable")[:elite]
        if not {now[i] for i in order} <= set(nxt):
            return False
    return bool(np.all(np.diff(res.population_best) >= 0))


def ga_checks(groups: list[str]) -> list[tuple[str, bool, str]]:
    """GA on a separable toy fitness: count of zeros minus a penalty on protected (first-of-group) genes."""
    protected = {groups.index(name) for name in dict.fromkeys(groups)}

    def toy(g):
        return sum(1 for i, x in enumerate(g) if x == 0) - 10 * sum(1 for i in protected if g[i] == 0)

    cfg = GAConfig(population=20, generations=30, seed=3)
    a, b = run_ga(toy, groups, cfg), run_ga(toy, groups, cfg)
    limit = int(np.ceil(0.5 * len(groups)))
    return [
        ("4. GA returns a valid mask", is_valid(a.best, groups, cfg.max_drop), f"L = {len(groups)}, ≤ {limit} zeros"),
        (
            f"4. elitism: each generation's {cfg.elite} best genomes survive unchanged into the next",
            elitism_holds(a, cfg.elite),
            f"{len(a.populations) - 1} generations; population best {a.population_best[0]:g} → "
            f"{a.population_best[-1]:g}",
        ),
        ("4. finds the toy optimum", a.best_fitness == limit, f"best {a.best_fitness} vs optimum {limit}"),
        ("4. same seed ⇒ same result", a.best == b.best and a.best_curve == b.best_curve, ""),
    ]


def directional(summary: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """Check 5 from the aggregated VQA arms (mean over seeds): background questions and overall."""
    out = []
    vqa = summary.get("vqa")
    if not vqa:
        return out
    for base, label in (("random_patches", "random dropping"), ("fg_only", "foreground-first selection")):
        if base not in vqa:
            continue
        for key, what in (("bg", "background questions"), ("score", "all questions")):
            a, b = vqa["ipf"][key], vqa[base][key]
            name = f"5. IPF (ρ = {vqa['ipf']['rho']:g}) beats {label} on {what}"
            out.append((name, a > b, f"{100 * a:.1f} vs {100 * b:.1f} %"))
    if "random_mask" in vqa:
        a, b = vqa["alf"]["score"], vqa["random_mask"]["score"]
        out.append(("5. GA mask beats a random mask with as many zeros", a > b, f"{100 * a:.1f} vs {100 * b:.1f} %"))
    return out
