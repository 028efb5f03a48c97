"""Process environment defaults that keep third-party libraries offline.

Three libraries reach the network on import or first use unless told otherwise:
litellm fetches a model price map (``LITELLM_LOCAL_MODEL_COST_MAP``), the
Hugging Face hub resolves model names online (``HF_HUB_OFFLINE``), and transformers
replaces a loaded model's layers with kernels fetched from the hub (``USE_HUB_KERNELS``). Every model
paperworks runs is local, so both default to offline. The defaults are applied once,
by ``core/__init__.py``: every entrypoint (API, worker, CLI, UI-less scripts, tests)
imports :mod:`core` before it loads litellm or a Hugging Face library. A value already
in the environment wins (``HF_HUB_OFFLINE=0`` to allow downloads).
"""

from __future__ import annotations

import os

OFFLINE_DEFAULTS: dict[str, str] = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm otherwise fetches a price map at import
    "HF_HUB_OFFLINE": "1",  # nothing downloads at run time; models load from site-packages or the cache
    # transformers >= 5 swaps layers of every loaded model for Hugging Face hub kernels (fetched from the hub,
    # and again at every train()/eval() switch for the weights' device) when the `kernels` package is present
    "USE_HUB_KERNELS": "NO",
}


def apply_offline_defaults() -> None:
    """Set :data:`OFFLINE_DEFAULTS` where the environment does not already say otherwise (idempotent)."""
    for name, value in OFFLINE_DEFAULTS.items():
        os.environ.setdefault(name, value)
