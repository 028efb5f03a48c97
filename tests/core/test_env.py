"""Offline defaults are applied once, by importing core, before any entrypoint loads litellm or the HF hub."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.env import OFFLINE_DEFAULTS, apply_offline_defaults

REPO = Path(__file__).resolve().parents[2]

_PROBE = """
import importlib, os, sys
importlib.import_module(sys.argv[1])
import core.env
for name, value in core.env.OFFLINE_DEFAULTS.items():
    assert os.environ.get(name) == value, (name, os.environ.get(name))
if "huggingface_hub" in sys.modules:  # loaded by the entrypoint: it must have read the offline flag
    assert sys.modules["huggingface_hub"].constants.HF_HUB_OFFLINE, "huggingface_hub loaded before the default"
print("ok")
"""


def test_setdefault_keeps_an_explicit_value(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    apply_offline_defaults()
    assert os.environ["HF_HUB_OFFLINE"] == "0"
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == OFFLINE_DEFAULTS["LITELLM_LOCAL_MODEL_COST_MAP"]


@pytest.mark.parametrize(
    "entrypoint",
    ["core", "services.api.main", "services.worker.celery_app", "services.cli.main", "core.llm.embeddings"],
)
def test_every_entrypoint_starts_offline(entrypoint, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in OFFLINE_DEFAULTS}
    env["PAPERWORKS_HOME"] = str(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, entrypoint], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_no_other_module_sets_them():
    """The defaults live in core/env.py only (entrypoints used to carry copies)."""
    hits = []
    for root in ("core", "services", "agents", "methods"):
        for path in (REPO / root).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if path != REPO / "core" / "env.py" and any(f'setdefault("{name}"' in text for name in OFFLINE_DEFAULTS):
                hits.append(str(path.relative_to(REPO)))
    assert hits == []


def test_loaded_transformers_models_keep_their_own_layers(tmp_path):
    """With the `kernels` package installed, transformers >= 5 would swap layers for hub kernels (a download)."""
    import transformers

    import core  # noqa: F401  (applies the defaults)

    cfg = transformers.LlamaConfig(
        vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2
    )
    transformers.LlamaForCausalLM(cfg).save_pretrained(tmp_path)
    model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path)
    model.train()
    model.eval()
    assert os.environ["USE_HUB_KERNELS"] == "NO"
    assert model.use_kernels is False
