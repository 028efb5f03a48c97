"""M3-JEPA on the command line: the ``paperworks m3jepa`` group of ``methods/m3_jepa``.

Generated from the params models (:mod:`services.cli.entries`):

* ``paperworks m3jepa train --variant mlp --seed 1`` — one variant: test R@1/5/10, zero-shot, expert usage;
* ``paperworks m3jepa study --seeds 3`` — every variant × seed with the §7 checks (``reproduce m3_jepa`` writes
  the doc);
* ``paperworks m3jepa retrieve "a bold seven leaning to the left" -k 8`` — the nearest test digits.
"""

from __future__ import annotations

from services.cli.entries import MethodCommands

m3 = MethodCommands(
    "m3_jepa", name="m3jepa", help="M3-JEPA: MoE predictor + alternating gradient descent, digits ↔ captions."
)
m3.entry("m3_jepa.retrieve", arguments=("caption",), aliases={"k": ("-k",)})


def register(app) -> None:
    m3.register(app)
