"""Misalignment regularizer on a tiny byte-level causal LM (spec §6.2, scaled down).

Corpus: GSM8K train questions+answers and MATH (lms3) train problems+solutions, documents joined with
EOS; held-out: GSM8K/MATH test; out-of-domain: WikiText-2 test. Vocab 259 = 256 bytes + BOS/EOS/PAD.
Stage A pretrains with α = 0; stage B continues from the same checkpoint for each α with the same
seed and data order, using the two-window construction (:func:`misalign.two_window_loss`).

Models are initialised on the CPU and trained and evaluated on the run's ``device``; token windows are
cut from the corpus on the CPU (seeded, the same on every device) and moved there batch by batch.
"""

from __future__ import annotations

import copy
import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.nn import functional as F

from core.device import autocast, resolve_device
from core.train import fit, pin_threads, seed_everything
from methods.long_short_alignment.misalign import misalignment_metric, sample_l_extra, two_window_loss
from methods.long_short_alignment.model import CausalTransformer

VOCAB, BOS, EOS, PAD = 259, 256, 257, 258


@dataclass(frozen=True)
class LMConfig:
    l_train: int = 64
    d: int = 64
    heads: int = 4
    layers: int = 2
    ffn: int = 192
    batch: int = 16
    lr: float = 1e-3
    stage_a_steps: int = 300
    stage_b_steps: int = 150
    alphas: tuple[float, ...] = (0.0, 0.1, 1.0)
    eval_lengths: tuple[int, ...] = (64, 128, 256)
    eval_tokens: int = 16384
    misalign_samples: int = 64
    saves: int = 2
    seed: int = 0
    max_chars: int = 2_000_000
    variants: tuple[str, ...] = ("b1",)
    extra: dict = field(default_factory=dict)

    def stage_b(self, variant: str) -> tuple[int, float, tuple[int, ...]]:
        """(training length, RoPE scale, evaluation lengths) of stage B for ``variant``.

        B1 keeps l_train (pure length generalization); B2 extends the context to 2·l_train with RoPE
        position interpolation (scale ½), the CLEX/LongQLoRA-style adaptation of spec §6.2. Evaluation
        lengths are the configured ones (×1, ×2, ×4 of l_train) scaled by the same factor.
        """
        if variant == "b1":
            return self.l_train, 1.0, self.eval_lengths
        if variant == "b2":
            return 2 * self.l_train, 0.5, tuple(2 * k for k in self.eval_lengths)
        raise ValueError(f"unknown stage-B variant {variant!r} (b1 or b2)")


def _docs(path: Path, keys: tuple[str, ...], limit: int) -> list[str]:
    out, total = [], 0
    with path.open() as f:
        for line in f:
            row = json.loads(line)
            text = "\n".join(str(row[k]) for k in keys if k in row)
            out.append(text)
            total += len(text)
            if total >= limit:
                break
    return out


def encode(docs: list[str]) -> torch.Tensor:
    ids: list[int] = []
    for d in docs:
        ids.extend(d.encode("utf-8"))
        ids.append(EOS)
    return torch.tensor(ids, dtype=torch.long)


def load_corpus(data_dir: Path, max_chars: int) -> dict[str, torch.Tensor]:
    half = max_chars // 2
    train = _docs(data_dir / "gsm8k/train.jsonl", ("question", "answer"), half)
    train += _docs(data_dir / "math_lms3/train.jsonl", ("problem", "solution"), half)
    random.Random(0).shuffle(train)
    held = _docs(data_dir / "gsm8k/test.jsonl", ("question", "answer"), 200_000)
    held += _docs(data_dir / "math_lms3/test.jsonl", ("problem", "solution"), 200_000)
    random.Random(1).shuffle(held)
    wiki = (data_dir / "wikitext2_test/wikitext2_raw_test_joined.txt").read_text()[:400_000]
    return {"train": encode(train), "heldout": encode(held), "wikitext2": encode([wiki])}


def build_lm(cfg: LMConfig) -> CausalTransformer:
    return CausalTransformer(
        VOCAB, d=cfg.d, heads=cfg.heads, layers=cfg.layers, ffn=cfg.ffn, pe="rope", out_dim=None, swiglu=True
    )


@torch.no_grad()
def perplexity(
    model: CausalTransformer, ids: torch.Tensor, length: int, n_tokens: int, tail: int, *, amp: str = "off"
) -> dict[str, float]:
    """Non-overlapping windows of ``length``: loss over all positions and over the last ``tail`` positions.

    Runs on the model's device (the windows are moved there).
    """
    model.eval()
    dev = next(model.parameters()).device
    n_win = max(1, min(n_tokens // length, (len(ids) - 1) // (length + 1)))
    tot = last = 0.0
    for i in range(0, n_win, 8):
        xs = torch.stack([ids[j * length : j * length + length + 1] for j in range(i, min(i + 8, n_win))]).to(dev)
        with autocast(dev, amp):
            logits = model(xs[:, :-1])
        logits = logits.float()
        ce = F.cross_entropy(logits.transpose(1, 2), xs[:, 1:], reduction="none")
        tot += float(ce.mean(1).sum())
        last += float(ce[:, -tail:].mean(1).sum())
    return {"ppl": math.exp(tot / n_win), "ppl_last": math.exp(last / n_win), "nll": tot / n_win}


def _batches(ids: torch.Tensor, cfg: LMConfig, seed: int, two_window: bool, l_train: int | None = None):
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    length = l_train or cfg.l_train

    def take(_step: int):
        l_extra = sample_l_extra(length, rng) if two_window else 0
        span = length + l_extra + 1
        starts = torch.randint(0, len(ids) - span, (cfg.batch,), generator=gen)
        return torch.stack([ids[s : s + span] for s in starts.tolist()]), l_extra

    return take


def evaluate(model, corpus, cfg: LMConfig, variant: str = "b1", *, amp: str = "off") -> dict:
    """L_misalign at the stage's l_train, PPL at its evaluation lengths, and the in-distribution train loss."""
    l_train, _, lengths = cfg.stage_b(variant)
    out = {
        "misalign": misalignment_metric(
            model, corpus["heldout"], l_train=l_train, n_samples=cfg.misalign_samples, seed=cfg.seed, amp=amp
        )
    }
    ppl = {}
    for split in ("heldout", "wikitext2"):
        for length in lengths:
            ppl[f"{split}@{length}"] = perplexity(
                model, corpus[split], length, cfg.eval_tokens, min(32, length), amp=amp
            )
    out["ppl"] = ppl
    out["train_loss"] = perplexity(model, corpus["train"], l_train, cfg.eval_tokens // 2, 16, amp=amp)["nll"]
    return out


def run_experiment(cfg: LMConfig, data_dir: Path, progress=None, *, device: Any = None, amp: str = "off") -> dict:
    """Stage A, then stage B for every (variant, α) (same seed/data order), evaluating at ``saves`` points each.

    Training and evaluation run on ``device`` (default: the CPU), under bf16 autocast with ``amp="bf16"``.
    """
    dev = resolve_device(device if device is not None else "cpu")
    seed_everything(cfg.seed)
    corpus = load_corpus(data_dir, cfg.max_chars)
    with pin_threads(1):
        base = build_lm(cfg)
        p_a = progress.sub(0.0, 0.3) if progress is not None else None
        stage_a = _batches(corpus["train"], cfg, cfg.seed, two_window=False)
        fit(
            base,
            stage_a,
            lambda m, b: two_window_loss(m, b[0], l_train=cfg.l_train, l_extra=0, alpha=0.0, train_loss_on="first")[0],
            steps=cfg.stage_a_steps,
            lr=cfg.lr,
            warmup=20,
            weight_decay=0.01,
            min_lr_ratio=0.1,
            progress=p_a,
            message="stage A",
            device=dev,
            amp=amp,
        )
        runs = []
        per = cfg.stage_b_steps // cfg.saves
        jobs = [(v, a) for v in cfg.variants for a in cfg.alphas]
        for k, (variant, alpha) in enumerate(jobs):
            l_b, scale, _ = cfg.stage_b(variant)
            model = copy.deepcopy(base)
            model.set_rope_scale(scale)  # B2: position interpolation for the extended context
            take = _batches(corpus["train"], cfg, cfg.seed + 1, two_window=True, l_train=l_b)
            step = 0
            for save in range(cfg.saves):
                p_b = None
                if progress is not None:
                    lo = 0.3 + 0.7 * (k * cfg.saves + save) / (len(jobs) * cfg.saves)
                    p_b = progress.sub(lo, lo + 0.7 / (len(jobs) * cfg.saves))

                def loss_fn(m, b, a=alpha, lb=l_b):
                    return two_window_loss(m, b[0], l_train=lb, l_extra=b[1], alpha=a)[0]

                fit(
                    model,
                    lambda s, o=step, t=take: t(s + o),
                    loss_fn,
                    steps=per,
                    lr=cfg.lr * 0.3,
                    warmup=0,
                    weight_decay=0.01,
                    min_lr_ratio=1.0,
                    progress=p_b,
                    message=f"stage B {variant} α={alpha}",
                    device=dev,
                    amp=amp,
                )
                step += per
                runs.append(
                    {
                        "variant": variant,
                        "alpha": alpha,
                        "seed": cfg.seed,
                        "step": step,
                        "l_train": l_b,
                        "rope_scale": scale,
                        **evaluate(model, corpus, cfg, variant, amp=amp),
                    }
                )
    return {"runs": runs, "corpus_tokens": {k: len(v) for k, v in corpus.items()}}


def pearson(x: list[float], y: list[float]) -> float:
    t = torch.tensor([x, y], dtype=torch.float64)
    c = torch.corrcoef(t)[0, 1]
    return float(c) if torch.isfinite(c) else float("nan")
