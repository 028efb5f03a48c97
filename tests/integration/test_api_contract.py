"""The API holds to its OpenAPI document under schemathesis (issue #27 item 8), against a real local API process.

Bounded: the generic and upload routes the issue probed (jobs, artifacts, methods, DEFAME, RF, PAE,
LMS3, continual), the coverage phase (boundary values, wrong types, missing fields) plus a few fuzzed
cases each, one worker, ``--max-time`` 30 s. No Celery worker runs, so the jobs it submits stay
queued (nothing heavy executes). Checks: no 5xx, every status code and content type documented,
every body matching its schema (errors included), ``Allow`` headers exact. docs/SECURITY.md records a
by-hand run over every operation.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

CONFIG = Path(__file__).with_name("schemathesis.toml")
PATHS = r"^/v1/(jobs|artifacts|methods|factcheck|rf/|webagent/|lms3/|continual/)"
CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
        "response_headers_conformance",
        "allow_header_conformance",
    ]
)


def test_schemathesis_finds_no_server_error_and_no_schema_violation(make_stack, tmp_path):
    home = tmp_path / "st"
    home.mkdir()
    stack = make_stack(f"sqlite:///{home / 'paperworks.db'}", f"sqla+sqlite:///{home / 'broker.db'}")
    stack.start_api()
    st = Path(sys.executable).with_name("schemathesis")
    cmd = [
        str(st),
        "--config-file",
        str(CONFIG),
        "run",
        f"{stack.url}/openapi.json",
        "-H",
        f"Authorization: Bearer {stack.key}",
        "--include-path-regex",
        PATHS,
        "--phases",
        "examples,coverage,fuzzing",
        "-n",
        "2",
        "--seed",
        "27",
        "-w",
        "1",
        "--max-time",
        "30",
        "--request-timeout",
        "30",
        "--suppress-health-check",
        "all",
        "--no-shrink",
        "--checks",
        CHECKS,
    ]
    env = dict(os.environ, NO_COLOR="1", SCHEMATHESIS_TELEMETRY="false")
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-8000:]
    assert "passed" in out and "failures" not in out.split("SUMMARY")[-1].lower(), out[-4000:]
