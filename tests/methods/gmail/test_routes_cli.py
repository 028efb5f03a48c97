"""``/v1/gmail`` routes (align job, pairs PNG, paper numbers, 422s) and the ``paperworks gmail`` commands."""

from typer.testing import CliRunner

from core.jobs.lifecycle import execute_job


def test_align_route_runs_and_reports(api_client):
    body = {"backbone": "test", "n_train": 64, "n_test": 32, "stage1_steps": 2, "stage2_steps": 1, "caption_steps": 0,
            "batch_size": 16, "artifact_strength": 0.5}  # fmt: skip
    r = api_client.post("/v1/gmail/align", json=body)
    assert r.status_code == 201, r.text
    job_id = r.json()["id"]
    assert execute_job(job_id).status == "succeeded"
    rep = api_client.get(f"/v1/jobs/{job_id}/report").json()["body"]
    assert any(a["name"] == "embeddings.png" and a["id"] for a in rep["artifacts"])
    assert set(rep["data"]["embedding_map"]) == {"naive", "dual-noalign", "gmail"}


def test_bad_bodies_and_queries_are_422(api_client):
    for body in ({"artifact_strength": -1}, {"rank": 64}, {"batch_size": 4}, {"unknown": 1}):
        assert api_client.post("/v1/gmail/align", json=body).status_code == 422, body
    for q in ("count=17", "strengths=abc", "strengths=3", "strengths=0,0.5,1,1.5,2", "start=-1"):
        assert api_client.get(f"/v1/gmail/pairs.png?{q}").status_code == 422, q


def test_pairs_png_and_paper(api_client):
    r = api_client.get("/v1/gmail/pairs.png?count=4&strengths=0.5,1.5")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    from io import BytesIO

    from PIL import Image

    img = Image.open(BytesIO(r.content))
    assert img.size == (4 * 98, 3 * 98)  # 4 pairs × (real + 2 strengths), 32 px × 3 + 2
    paper = api_client.get("/v1/gmail/paper").json()
    assert paper["paired_cosine"] == [0.52, 0.89]


def test_cli_pairs_writes_a_png_and_rejects_bad_strengths(tmp_path):
    from services.cli.main import app

    out = tmp_path / "p.png"
    r = CliRunner().invoke(app, ["gmail", "pairs", "-o", str(out), "--count", "2", "--strengths", "1.0"])
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:4] == b"\x89PNG"
    r = CliRunner().invoke(app, ["gmail", "pairs", "-o", str(out), "--strengths", "5"])
    assert r.exit_code == 2


def test_cli_align_runs_the_job_in_process_and_rejects_bad_params():
    from services.cli.main import app

    args = ["gmail", "align", "--backbone", "test", "--n-train", "64", "--n-test", "32", "--stage1-steps", "2",
            "--stage2-steps", "1", "--caption-steps", "0", "--batch-size", "16", "--strength", "0.5"]  # fmt: skip
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "GMAIL at artifact strength 0.5" in r.output
    r = CliRunner().invoke(app, ["gmail", "align", "--strength", "9"])
    assert r.exit_code == 2, r.output
