"""Server paths in params (issue #27 item 4): inside the artifact store / data dir / uploads, or artifact ids."""

import pytest

from core.config import get_settings
from core.server_paths import inside_roots


def test_paths_outside_the_roots_are_refused(tmp_path):
    s = get_settings()
    for bad in ("/etc", str(s.home), str(tmp_path), "relative/dir", f"{s.artifact_dir}/../.."):
        with pytest.raises(ValueError):
            inside_roots(bad, kind="dir")
    # a symlink inside a root that points out of it is judged by its target
    link = s.artifact_dir / "escape"
    link.unlink(missing_ok=True)
    link.symlink_to("/etc")
    try:
        with pytest.raises(ValueError, match="must lie inside"):
            inside_roots(str(link), kind="dir")
    finally:
        link.unlink()


def test_paths_inside_and_artifact_ids_are_accepted():
    s = get_settings()
    d = s.artifact_dir / "adapters" / "a1"
    d.mkdir(parents=True, exist_ok=True)
    assert inside_roots(str(d), kind="dir") == str(d.resolve())
    assert inside_roots("0123456789abcdef0123456789abcdef", allow_artifact_id=True) == "0123456789abcdef" * 2
    with pytest.raises(ValueError):
        inside_roots("0123456789abcdef0123456789abcdef")  # not where ids are not allowed


def test_pae_train_sft_adapter_is_checked_at_the_api(api_client):
    s = get_settings()
    for bad in ("/etc", str(s.home)):
        r = api_client.post("/v1/jobs", json={"method": "pae.train", "params": {"sft_adapter": bad}})
        assert r.status_code == 422 and "sft_adapter" in r.text, r.text
        r = api_client.post("/v1/webagent/runs", json={"sft_adapter": bad})
        assert r.status_code == 422, r.text
    # a folder in the artifact store that no job of this key made is another owner's (issue #48): 404
    d = s.artifact_dir / "adapters" / "ok"
    d.mkdir(parents=True, exist_ok=True)
    r = api_client.post("/v1/jobs", json={"method": "pae.train", "params": {"sft_adapter": str(d)}})
    assert r.status_code == 404 and "sft_adapter" in r.text, r.text
    # the data dir is the operator's shared, public root: a path inside it is accepted
    d = s.data_dir / "adapters" / "ok"
    d.mkdir(parents=True, exist_ok=True)
    r = api_client.post("/v1/jobs", json={"method": "pae.train", "params": {"sft_adapter": str(d)}})
    assert r.status_code == 201, r.text
