"""Rendered cases on disk: several threads asking for the same case at once all get whole images."""

from __future__ import annotations

import threading

from PIL import Image

from methods.clinical_got import bench
from methods.clinical_got.config import BenchConfig


def test_parallel_requests_for_one_case_render_it_once_and_whole(settings, monkeypatch, tmp_path):
    monkeypatch.setattr(settings, "cache_dir", tmp_path)
    bench._prepare.cache_clear()
    cfg = BenchConfig(n_cases=2, seed=11)
    out: list = []
    errors: list = []
    barrier = threading.Barrier(4)

    def ask():
        barrier.wait()
        try:
            out.append(bench.prepare_case(cfg, "case001"))
        except Exception as e:  # collected: a half-written image raised UnidentifiedImageError here
            errors.append(e)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    bench._prepare.cache_clear()
    assert not errors and len(out) == 4 and all(o is out[0] for o in out)
    case_dir = tmp_path / "clinical_got" / cfg.key() / "case001"
    assert (case_dir / "case.json").exists() and not list(case_dir.glob(".*.tmp"))
    for triple in out[0].triples:
        for kind in ("adc", "zmap", "roi"):
            with Image.open(triple[kind]) as im:
                im.load()
