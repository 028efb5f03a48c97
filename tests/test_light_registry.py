"""Registering the jobs is light (the registry, the API and every worker start with it).

``core.jobs.load_all`` imports every ``jobs.py``; those modules hold params and registrations only and
import the heavy libraries (torch, scikit-learn, langgraph, matplotlib, transformers) inside the job bodies.
Before, a worker or API process spent ~5 s of CPU importing them at start (each integration test starts
several); now ~1 s. A fresh interpreter checks it, since this test process has imported them all already.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

HEAVY = ("torch", "sklearn", "scipy", "langgraph", "matplotlib", "transformers", "pandas", "chromadb")

PROBE = f"""
import json, sys
from core.jobs.registry import load_all, list_methods
load_all()
from services.api.main import create_app
create_app()
print(json.dumps({{"heavy": [m for m in {HEAVY!r} if m in sys.modules], "methods": len(list_methods())}}))
"""


def test_load_all_and_the_api_import_no_heavy_library():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["heavy"] == [], f"imported at registration: {got['heavy']} (move the import into the job body)"
    assert got["methods"] >= 40, got


def test_a_lazy_package_still_exports_its_names():
    import methods.any4 as any4
    import methods.nonlinear_sdr as sdr
    from methods.nonlinear_sdr import config, realdata, simulate

    assert any4.QuantConfig.__name__ == "QuantConfig" and callable(any4.quantize_model)
    assert sdr.PrincipalMachineSDR.__name__ == "PrincipalMachineSDR"
    # the names the jobs validate against are the definitions' names, in the same order (the defaults)
    assert tuple(simulate.MODELS) == config.MODELS and tuple(simulate.ESTIMATORS) == config.ESTIMATORS
    assert realdata.DATASETS == config.DATASETS
