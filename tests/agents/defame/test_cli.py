"""The CLI commands: factcheck with an image, corpus add, eval averitec, nltk-data."""

from __future__ import annotations

import json

from PIL import Image, ImageDraw, ImageFont
from typer.testing import CliRunner

from services.cli.main import app

runner = CliRunner()


def test_factcheck_with_image_writes_a_report(stage_llm, settings, monkeypatch, tmp_path):
    model, script = stage_llm(
        {
            "plan": ["```\nocr(<image:1>)\n```"],
            "develop": ["The sign says CLOSED."],
            "judge": ["`refuted`"],
            "justify": ["The sign reads CLOSED."],
        }
    )
    monkeypatch.setattr(settings, "llm_model", model)
    img = Image.new("RGB", (420, 120), "white")
    ImageDraw.Draw(img).text((10, 30), "CLOSED", fill="black", font=ImageFont.load_default(size=48))
    path = tmp_path / "sign.png"
    img.save(path)
    res = runner.invoke(
        app,
        [
            "factcheck",
            "The shop is open.",
            "--image",
            str(path),
            "--date",
            "2024-01-02",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert res.exit_code == 0, res.output
    md = (tmp_path / "out" / "report.md").read_text()
    assert "![image 1](media/image_1.png)" in md and (tmp_path / "out" / "media" / "image_1.png").exists()
    assert "### Verdict: REFUTED" in md and "CLOSED" in md
    bad = runner.invoke(app, ["factcheck", "x", "--date", "02/01/2024"])
    assert bad.exit_code == 2


def test_factcheck_verdict_by_likelihood(stage_llm, settings, monkeypatch):
    def scorer(messages, conts):  # `supported` most likely, the rest equally unlikely
        return [-0.1 if c == "`supported`" else -5.0 for c in conts]

    model, script = stage_llm({"plan": ["nothing to search"], "justify": ["Fine."]}, scorer)
    monkeypatch.setattr(settings, "llm_model", model)
    res = runner.invoke(app, ["factcheck", "The sky is blue.", "--verdict", "likelihood", "--rounds", "1"])
    assert res.exit_code == 0, res.output
    assert "Verdict: SUPPORTED" in res.output and "judge" not in script.order
    bad = runner.invoke(app, ["factcheck", "The sky is blue.", "--verdict", "vibes"])
    assert bad.exit_code == 2 and "verdict" in bad.output


def test_corpus_add_and_eval_averitec(tmp_path, data_dir):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.html").write_text("<html><title>Bridge</title><body><p>The bridge opened in 1937.</p></body></html>")
    (docs / "page.html.json").write_text(json.dumps({"url": "https://example.org/bridge", "date": "2019-01-01"}))
    Image.new("RGB", (64, 64), "blue").save(docs / "blue_sky.png")
    res = runner.invoke(app, ["corpus", "add", str(docs), "--collection", "defame-cli-test"])
    assert res.exit_code == 0 and "1 documents, 1 images" in res.output
    refs = json.loads((data_dir / "averitec" / "dev.json").read_text())[:2]
    preds = [
        {"claim_id": i, "label": r["label"], "questions": r["questions"], "justification": r["justification"]}
        for i, r in enumerate(refs)
    ]
    (tmp_path / "p.json").write_text(json.dumps(preds))
    (tmp_path / "r.json").write_text(json.dumps(refs))
    res = runner.invoke(
        app, ["eval", "averitec", "--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json")]
    )
    assert res.exit_code == 0, res.output
    out = res.output
    assert "Question-answer score (HU-meteor): 0.99" in out and "* acc: 1.0000" in out
    assert "Veracity scores (meteor @ 0.25): 1.0000" in out
