"""``core.train.fit`` is the only training loop (issue #46 part 3).

A training loop is a ``for``/``while`` whose body calls both ``….backward(…)`` and ``….step(…)``
(an optimizer step). Outside ``core/train.py`` none may exist in the product packages: a method's
training goes through ``fit``, which owns the device, AMP, accumulation and the loss syncs. Single
steps outside a loop (the §7 checks that one step moves only the right parameters) are not loops.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "methods", "agents", "services", "ui", "paperworks_kernels")
THE_LOOP = REPO / "core" / "train.py"


def _calls(node: ast.AST) -> set[str]:
    return {n.func.attr for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}


def training_loops(source: str) -> list[int]:
    """Line numbers of the loops in ``source`` that call both ``backward`` and ``step``."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.While | ast.AsyncFor):
            body = ast.Module(body=node.body, type_ignores=[])
            if {"backward", "step"} <= _calls(body):
                found.append(node.lineno)
    return found


def test_the_detector_finds_a_hand_written_loop():
    hand = "for x, y in data:\n    opt.zero_grad()\n    loss = f(x, y)\n    loss.backward()\n    opt.step()\n"
    one_step = "loss = f(x)\nloss.backward()\nopt.step()\n"
    nested = "while True:\n    for b in data:\n        g(b).backward()\n    opt.step()\n"
    assert training_loops(hand) == [1]
    assert training_loops(one_step) == []
    assert training_loops(nested) == [1]  # the outer loop holds both calls


def test_fit_is_the_only_training_loop():
    offenders = []
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            if path == THE_LOOP:
                continue
            lines = training_loops(path.read_text(encoding="utf-8"))
            offenders += [f"{path.relative_to(REPO)}:{n}" for n in lines]
    assert offenders == [], f"training loops outside core.train.fit: {offenders}"
    assert training_loops(THE_LOOP.read_text(encoding="utf-8")), "core/train.py lost its loop?"
