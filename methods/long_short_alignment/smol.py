"""Long-short misalignment of a pretrained model: the local SmolLM2-135M on WikiText-2 (spec §6.3).

A sanity check of the metric on a real LM, not a reproduction of a paper number. For each sample an end
position e is drawn in the tokenized WikiText-2 test text; l1, l2 ~ U[l_train/2, l_train] (shared by a
batch, as in :func:`misalign.misalignment_metric`), and the next-token distributions after
``ids[e−l1:e]`` and ``ids[e−l2:e]`` are compared by SCE and SKL. Only the last position's logits are
computed (hidden state @ lm_head), which saves the 49k-vocabulary projection of every other position.

Two controls make the values readable: the same suffix twice (l1 = l2, SKL must be 0) and a
*shuffled-context* pair (the long input's extra left context replaced by tokens from elsewhere in the
text), which bounds how much any unrelated left context moves the prediction. The entropies are logged
so that SCE = H(p) + H(q) + SKL can be checked on the real values.

On a ``device`` other than the CPU the forward passes run on a copy of the shared local model moved
there (the process-wide CPU instance, which the gateway also serves, is never moved).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import torch

from core.device import autocast, resolve_device
from core.stats import mean_sd
from methods.long_short_alignment.misalign import entropy, sce, skl


def _last_logits(model: Any, x: torch.Tensor, amp: str = "off") -> torch.Tensor:
    """Logits of the next token after each row of ``x`` (B, T) → (B, V), fp32, on the model's device."""
    dev = model.lm_head.weight.device
    with autocast(dev, amp):
        out = model.model(input_ids=x.to(dev))
        logits = model.lm_head(out.last_hidden_state[:, -1])
    return logits.float()


def _mean_se(v: list[float]) -> tuple[float, float]:
    if len(v) < 2:
        return (v[0] if v else float("nan")), float("nan")
    ms = mean_sd(v, exact=True)  # mean ± standard error
    return ms.mean, ms.sd / len(v) ** 0.5


@torch.no_grad()
def smollm2_misalignment(
    data_dir: Path,
    *,
    l_train: int = 128,
    n_samples: int = 8,
    batch: int = 4,
    seed: int = 0,
    model_name: str | None = None,
    progress: Any = None,
    device: Any = "cpu",
    amp: str = "off",
) -> dict[str, Any]:
    """SCE / SKL (mean ± s.e. over samples) for real suffix pairs, the l1 = l2 control and shuffled context.

    The forward passes run on ``device`` (``amp="bf16"``: bfloat16 autocast); the values come back as floats.
    """
    import copy

    from core.llm.local_models import get_local_model

    dev = resolve_device(device)
    lm = get_local_model(model_name)
    model = lm.model if dev.type == "cpu" else copy.deepcopy(lm.model).to(dev)
    text = (data_dir / "wikitext2_test/wikitext2_raw_test_joined.txt").read_text()[:300_000]
    ids = torch.tensor(lm.tokenizer(text)["input_ids"], dtype=torch.long)
    if len(ids) < 4 * l_train:
        raise ValueError(f"WikiText-2 text too short for l_train={l_train} ({len(ids)} tokens)")
    rng = random.Random(seed)
    rows: dict[str, list[float]] = {k: [] for k in ("sce", "skl", "h_long", "h_short", "skl_same", "skl_shuffled")}
    done = 0
    while done < n_samples:
        bs = min(batch, n_samples - done)
        l1, l2 = rng.randint(l_train // 2, l_train), rng.randint(l_train // 2, l_train)
        l_long, l_short = max(l1, l2), min(l1, l2)
        ends = [rng.randint(2 * l_train, len(ids)) for _ in range(bs)]
        x_long = torch.stack([ids[e - l_long : e] for e in ends])
        x_short = torch.stack([ids[e - l_short : e] for e in ends])
        extra = l_long - l_short
        # shuffled control: same final l_short tokens, the extra left context taken from a random other place
        others = [rng.randint(0, len(ids) - extra - 1) for _ in range(bs)]
        x_shuf = torch.stack(
            [torch.cat([ids[o : o + extra], ids[e - l_short : e]]) for o, e in zip(others, ends, strict=True)]
        )
        a, b, c = (_last_logits(model, x, amp) for x in (x_long, x_short, x_shuf))
        rows["sce"] += sce(a, b).cpu().tolist()
        rows["skl"] += skl(a, b).cpu().tolist()
        rows["h_long"] += entropy(a).cpu().tolist()
        rows["h_short"] += entropy(b).cpu().tolist()
        rows["skl_same"] += skl(b, _last_logits(model, x_short, amp)).cpu().tolist()
        rows["skl_shuffled"] += skl(c, b).cpu().tolist()
        done += bs
        if progress is not None:
            progress(done / n_samples, f"SmolLM2 misalignment {done}/{n_samples}")
    summary = {k: _mean_se(v) for k, v in rows.items()}
    identity_gap = max(
        abs(s - (h1 + h2 + k))
        for s, h1, h2, k in zip(rows["sce"], rows["h_long"], rows["h_short"], rows["skl"], strict=True)
    )
    return {
        "model": lm.name,
        "l_train": l_train,
        "n_samples": n_samples,
        "tokens": len(ids),
        "summary": {k: {"mean": m, "se": se} for k, (m, se) in summary.items()},
        "max_sce_identity_gap": identity_gap,
        "samples": rows,
    }
