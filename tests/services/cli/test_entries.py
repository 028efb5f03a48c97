"""The generated job commands (services/cli/entries.py): options from the params models, values as typed."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from PIL import Image
from typer.testing import CliRunner

from services.cli import entries, jobrun
from services.cli.main import app


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, dict]]:
    """The (method, params) each command would run (nothing runs)."""
    calls: list[tuple[str, dict]] = []
    monkeypatch.setattr(entries, "run_job", lambda method, params, **kw: calls.append((method, params)) or 0)
    return calls


def _ok(argv: list[str]) -> None:
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 0, r.output


def test_only_the_options_given_are_sent(sent):
    _ok(["lsa", "synthetic"])
    _ok(["lsa", "synthetic", "--steps", "7", "--pe", "rope"])
    assert sent == [("lsa.synthetic", {}), ("lsa.synthetic", {"steps": 7, "pe": "rope"})]


def test_lists_dicts_and_flags(sent):
    _ok(["double-filter", "experiment", "--tasks", "vqa,nlvr", "--seeds", "2", "--no-directional"])
    _ok(["sefe", "run", "--arm", "seq", "--arm", "sefe", "--seeds", "0,1"])
    _ok(["lsa", "lm", "--alphas", "0,0.1,1", "--variants", '["b1", "b2"]'])
    _ok(["continual", "run", "dpcr", "-o", "lr_first=0.5", "--option", 'arms=["lwf"]', "--tasks", "3"])
    _ok(["medcog", "lowmid", "--items", "3", "--dataset", "medmcqa", "--dataset", "medqa"])  # the old option names
    params = dict(sent)
    assert params["double_filter.experiment"] == {"tasks": ["vqa", "nlvr"], "seeds": 2, "directional": False}
    assert params["sefe.run"] == {"arms": ["seq", "sefe"], "seeds": [0, 1]}
    assert params["lsa.lm"] == {"alphas": [0, 0.1, 1], "variants": ["b1", "b2"]}
    assert params["continual.run"] == {"method": "dpcr", "options": {"lr_first": 0.5, "arms": ["lwf"]}, "n_tasks": 3}
    assert params["medcog.lowmid"] == {"n_items": 3, "datasets": ["medmcqa", "medqa"]}


def test_arguments_aliases_and_presets(sent):
    from methods.continual.learner import get_learner

    _ok(["lms3", "select", "gsm8k", "What is 2 + 3?", "-k", "2", "--l", "0.1"])
    _ok(["m3jepa", "retrieve", "a bold seven", "-k", "4"])
    preset = "quick"
    _ok(["continual", "run", "dpcr", "--preset", preset, "-o", "tssp_passes=5"])
    _ok(["lada", "run", "xtail_lwf", "--shots", "4"])  # the old command name of lada.xtail
    # pae run: --preset fills fields, the options given win, and the older -o key=value still works
    _ok(["pae", "run", "--preset", "small", "-o", 'reward="llm"', "-o", "seed=3", "--iterations", "1"])
    params = dict(sent)
    from agents.pae.config import PRESETS

    assert params["pae.train"] == {**PRESETS["small"], "iterations": 1, "reward": "llm", "seed": 3}
    assert params["lms3.select"] == {"dataset": "gsm8k", "query": "What is 2 + 3?", "k": 2, "l": 0.1}
    assert params["m3_jepa.retrieve"] == {"caption": "a bold seven", "k": 4}
    assert params["continual.run"]["options"] == {**get_learner("dpcr").presets[preset], "tssp_passes": 5}
    assert params["lada.xtail"] == {"method": "xtail_lwf", "shots": 4}


def test_invalid_values_are_one_sentence_per_option(sent):
    r = CliRunner().invoke(app, ["sefe", "run", "--task", "iris", "--task", "nope", "--seeds", "0,x"])
    assert r.exit_code == 2 and sent == []
    lines = [line.strip() for line in r.output.splitlines()]
    assert any(line.startswith("--tasks.1: ") for line in lines), r.output
    assert any(line.startswith("--seeds.1: ") for line in lines), r.output
    assert "{'" not in r.output and "loc" not in r.output  # no raw error dicts
    r = CliRunner().invoke(app, ["rf", "edit", "--digit-index", "3", "--steps", "5", "--inject", "9"])  # cross-field
    assert r.exit_code == 2 and sent == []
    from methods.rf_solver.jobs import EditParams

    with pytest.raises(ValueError) as exc:
        EditParams(digit_index=3, steps=5, inject=9)
    sentence = exc.value.errors()[0]["msg"].removeprefix("Value error, ")
    assert sentence in " ".join(r.output.split())


def test_help_shows_the_models_ranges_choices_and_defaults():
    text = " ".join(CliRunner().invoke(app, ["sdr", "fit", "--help"], env={"COLUMNS": "250"}).output.split())
    assert "[0<=x<=50]" in text and "linear|kernel|neural|sir|save|dr|phd" in text and "[default: kernel]" in text
    assert "--evaluate --no-evaluate" in text and "TABLE" in text and "--plot" in text


def test_a_job_prints_its_report_as_json_on_stdout():
    r = CliRunner().invoke(app, ["diagnostics", "sleep", "--seconds", "0", "--steps", "2", "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["metrics"]["steps"] == 2 and report["title"]


def test_a_renamed_png_is_not_a_csv(tmp_path, sent):
    fake = tmp_path / "table.csv"
    Image.new("L", (8, 8)).save(fake, format="PNG")
    r = CliRunner().invoke(app, ["sdr", "fit", str(fake), "--response", "y"])
    assert r.exit_code == 2 and sent == []
    assert "table.csv is not a CSV table: its content is a PNG image" in " ".join(r.output.split())
    assert "codec" not in r.output


def test_remote_uploads_go_to_the_upload_route_and_errors_read_as_sentences(api_client, monkeypatch, tmp_path):
    img = tmp_path / "d.png"
    Image.new("L", (16, 16), 90).save(img)
    r = jobrun._post_job(api_client, "rf.edit", {"steps": 6, "nfes": None}, {"image": [img]}, "/v1/rf/edit")
    assert r.status_code == 201, r.text
    assert r.json()["params"]["steps"] == 6 and len(r.json()["params"]["image_sha256"]) == 64
    # a 422 from the API: one sentence per field, not the raw body
    buf = io.StringIO()
    from rich.console import Console

    monkeypatch.setattr(jobrun, "console", Console(file=buf, width=300))
    monkeypatch.setattr(jobrun, "api_client", lambda: contextlib.nullcontext(api_client))
    code = jobrun.run_job("nonlinear_sdr.fit", {"dataset": "wine", "n_components": 40, "lam": 0}, remote=True)
    out = buf.getvalue()
    assert code == jobrun.EXIT_BAD_INPUT
    assert "error 422" in out and "lam: Input should be greater than 0" in out and "'errors'" not in out
