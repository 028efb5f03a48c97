"""Long-short alignment on the command line: the ``paperworks lsa`` group of ``methods/long_short_alignment``.

Generated from the params models (:mod:`services.cli.entries`):

* ``paperworks lsa synthetic --task length --pe rope --steps 300`` — MSE by test length (trained on l ≤ 10);
* ``paperworks lsa lm --alphas 0,0.1,1 --variants b1,b2`` — the byte LM with the misalignment regularizer,
  PPL by length (b2: context extended ×2 with RoPE position interpolation);
* ``paperworks lsa smollm2 --samples 8`` — L_misalign of the local SmolLM2-135M on WikiText-2.
"""

from __future__ import annotations

from services.cli.entries import MethodCommands

lsa = MethodCommands(
    "long_short_alignment",
    name="lsa",
    help="Long-short alignment: length generalization and the misalignment regularizer.",
)
lsa.entry("lsa.smollm2", aliases={"n_samples": ("--samples",)})


def register(app) -> None:
    lsa.register(app)
