"""The spec's §7 unit invariants as functions returning ``(check, passed, detail)``.

They run in the tests and again in ``paperworks reproduce sefe`` (cheap: random matrices, a tiny
random Llama), so the results page shows them measured, not asserted.
"""

from __future__ import annotations

from collections import Counter

import torch

from methods.sefe.asd import eval_examples, style_counts, train_examples
from methods.sefe.reglora import KeyMemory, key_count, key_positions, penalty
from methods.sefe.tasks import TASKS

Check = tuple[str, bool, str]


def check_key_selection(m: int = 37, n: int = 53, r: int = 4, seed: int = 0) -> list[Check]:
    g = torch.Generator().manual_seed(seed)
    B, A = torch.randn(m, r, generator=g), torch.randn(r, n, generator=g)
    idx = key_positions(B, A)
    delta = (B @ A).abs()
    flat = delta.flatten()
    mask = torch.zeros_like(flat, dtype=torch.bool)
    mask[idx] = True
    rows, cols = idx // n, idx % n
    return [
        ("key selection: |S| = ⌊0.02·m·n⌋", len(idx) == int(0.02 * m * n), f"{len(idx)} of {m}×{n}"),
        (
            "key selection: every selected |ΔW| ≥ every unselected",
            bool(flat[mask].min() >= flat[~mask].max()),
            f"min selected {float(flat[mask].min()):.4f} ≥ max unselected {float(flat[~mask].max()):.4f}",
        ),
        (
            "key selection: (row, col) = (idx // n, idx % n) round-trips",
            bool(torch.equal(delta[rows, cols], flat[idx])),
            "values equal",
        ),
    ]


def _pairs(shapes: list[tuple[int, int]], r: int, seed: int, zero_b: bool = False):
    g = torch.Generator().manual_seed(seed)
    out = []
    for k, (m, n) in enumerate(shapes):
        B = torch.zeros(m, r, dtype=torch.float64) if zero_b else torch.randn(m, r, generator=g, dtype=torch.float64)
        out.append(
            (f"layer{k}", B.requires_grad_(), torch.randn(r, n, generator=g, dtype=torch.float64).requires_grad_())
        )
    return out


class _Pairs:
    """A stand-in for a PEFT model: exposes ``named_modules`` with ``lora_A``/``lora_B`` dicts."""

    def __init__(self, pairs):
        self.mods = []
        for name, B, A in pairs:
            mod = torch.nn.Module()
            mod.lora_A = {"default": torch.nn.Linear(1, 1)}
            mod.lora_B = {"default": torch.nn.Linear(1, 1)}
            mod.lora_A["default"].weight = torch.nn.Parameter(A.detach().clone())
            mod.lora_B["default"].weight = torch.nn.Parameter(B.detach().clone())
            self.mods.append((name, mod))

    def named_modules(self):
        return iter(self.mods)


def check_accumulation_and_penalty(seed: int = 0) -> list[Check]:
    shapes = [(20, 30), (30, 20), (40, 25)]
    mem = KeyMemory()
    for t in range(3):
        mem.extend([(n, B.detach(), A.detach()) for n, B, A in _pairs(shapes, 4, seed + t)])
    expected = 3 * sum(key_count(m, n) for m, n in shapes)
    out: list[Check] = [
        ("accumulation: |K^(t)| = Σ_s ⌊0.02·m·n⌋ (duplicates kept)", len(mem) == expected, f"{len(mem)} = {expected}")
    ]
    # B = 0 at the start of a task: penalty 0 and zero gradients
    fresh = _Pairs(_pairs(shapes, 4, seed + 10, zero_b=True))
    reg = penalty(fresh, mem)
    reg.backward()
    grads = [
        float(mod.lora_B["default"].weight.grad.abs().max()) + float(mod.lora_A["default"].weight.grad.abs().max())
        for _, mod in fresh.mods
    ]
    out.append(
        (
            "penalty: 0 with zero gradients when B = 0",
            float(reg.detach()) == 0.0 and max(grads) == 0.0,
            f"L_reg = {float(reg.detach())}, max |grad| = {max(grads)}",
        )
    )
    # gradient w.r.t. B equals the finite difference (float64)
    model = _Pairs(_pairs(shapes, 4, seed + 20))
    reg = penalty(model, mem)
    reg.backward()
    name, mod = model.mods[1]
    Bw = mod.lora_B["default"].weight
    first = int(mem.positions[name][0])  # a row that holds stored positions, so the gradient is non-trivial
    eps, (i, j) = 1e-6, (first // shapes[1][1], 1)
    with torch.no_grad():
        Bw[i, j] += eps
        up = float(penalty(model, mem))
        Bw[i, j] -= 2 * eps
        down = float(penalty(model, mem))
        Bw[i, j] += eps
    fd = (up - down) / (2 * eps)
    an = float(Bw.grad[i, j])
    out.append(
        (
            "penalty: dL_reg/dB = finite difference (float64)",
            an != 0 and abs(fd - an) <= 1e-6 * max(1.0, abs(an)),
            f"analytic {an:.8f}, numeric {fd:.8f}",
        )
    )
    # locality: perturbing ΔW outside K leaves L_reg unchanged (perturb via a rank-1 update masked to outside K)
    base = float(penalty(model, mem).detach())
    with torch.no_grad():
        _, mod0 = model.mods[0]
        B0, A0 = mod0.lora_B["default"].weight, mod0.lora_A["default"].weight
        delta = B0 @ A0
        keep = torch.zeros(delta.numel(), dtype=torch.bool)
        keep[mem.positions["layer0"].long()] = True
        outside = torch.randn_like(delta).flatten()
        outside[keep] = 0
        new_delta = delta + outside.view_as(delta)
        # re-factorise exactly with a full-rank pair: B' = new ΔW, A' = I
        mod0.lora_B["default"].weight = torch.nn.Parameter(new_delta.clone())
        mod0.lora_A["default"].weight = torch.nn.Parameter(torch.eye(delta.shape[1], dtype=delta.dtype))
    after = float(penalty(model, mem).detach())
    out.append(
        (
            "penalty: changing ΔW outside K leaves L_reg unchanged",
            abs(after - base) < 1e-12,
            f"{base:.10f} → {after:.10f}",
        )
    )
    return out


def check_asd(task: str = "iris", n: int = 80, x: float = 20.0, seed: int = 0) -> list[Check]:
    ex = train_examples(task, n_train=n, seed=seed, x_percent=x)
    native = TASKS[task].native
    counts = Counter(e.style for e in ex)
    want = style_counts(len(ex), x, native)
    per = len(ex) * x / 100 / 4
    ok_counts = all(abs(counts[s] - per) <= 1 for s in want if s != native) and counts[native] == want[native]
    yn = [e.meta["yn_truth"] for e in ex if e.style == "YN" and e.transformed]
    letters = Counter(e.meta["mcq_letter"] for e in ex if e.style == "MCQ" and e.transformed)
    tests = eval_examples(task, n_test=30)
    mcq = (
        []
        if native == "MCQ"
        else [
            (
                "ASD: MCQ correct letter uniform over A–D",
                max(letters.values(), default=0) - min([letters.get(k, 0) for k in "ABCD"]) <= 1,
                dict(sorted(letters.items())).__repr__(),
            )
        ]
    )
    yn_check = (
        []
        if native == "YN"
        else [
            (
                "ASD: YN labels balanced",
                abs(sum(yn) - (len(yn) - sum(yn))) <= 1,
                f"{sum(yn)} yes / {len(yn) - sum(yn)} no",
            )
        ]
    )
    return [
        (
            f"ASD ({task}, n={len(ex)}, X={x:g}): each non-native style = X/4 % ± 1, native = 100−X %",
            ok_counts,
            ", ".join(f"{s} {counts[s]}" for s in ("YN", "MCQ", "SA", "BE", "DE")),
        ),
        *yn_check,
        *mcq,
        (
            "ASD: no test example is transformed",
            all(not e.transformed and e.style == native for e in tests),
            f"{len(tests)} test items, all {native}",
        ),
    ]


def check_merge(seed: int = 0) -> list[Check]:
    """Merged weights give the same logits as base + (α/r)·B A through PEFT (tiny random Llama)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from methods.sefe.lora import TrainSettings, attach_lora, merge

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    model = LlamaForCausalLM(cfg).eval()
    s = TrainSettings(rank=4, alpha=8.0, dropout=0.0)
    pm = attach_lora(model, s)
    with torch.no_grad():
        for _, mod in pm.named_modules():
            if hasattr(mod, "lora_B") and "default" in getattr(mod, "lora_B", {}):
                mod.lora_B["default"].weight.normal_(0, 0.1)
    pm.eval()
    ids = torch.randint(0, 64, (2, 9))
    with torch.no_grad():
        ref = pm(input_ids=ids).logits
        merged, pairs = merge(pm, s)
        got = merged(input_ids=ids).logits
    diff = float((ref - got).abs().max())
    return [
        (
            "merge: merged model = base + (α/r)·B A forward (max abs diff < 1e-5)",
            diff < 1e-5,
            f"max abs diff {diff:.2e} over {len(pairs)} matrices",
        )
    ]


def all_checks() -> list[Check]:
    return check_key_selection() + check_accumulation_and_penalty() + check_asd() + check_asd("wine") + check_merge()
