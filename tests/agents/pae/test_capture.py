"""A failed screenshot is retried, then the state goes without one: it must not end a training job."""

from __future__ import annotations

from pathlib import Path

from agents.pae.env import capture


class FlakyPage:
    def __init__(self, failures: int) -> None:
        self.failures, self.calls = failures, 0

    def screenshot(self, path: str) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError("Page.screenshot: Protocol error (Page.captureScreenshot): Unable to capture screenshot")
        Path(path).write_bytes(b"\x89PNG")


def test_a_transient_failure_is_retried(tmp_path):
    page = FlakyPage(failures=2)
    shot = capture(page, tmp_path / "ep" / "t_00.png", attempts=3, pause_s=0)
    assert shot == str(tmp_path / "ep" / "t_00.png") and Path(shot).read_bytes() == b"\x89PNG"
    assert page.calls == 3


def test_a_lasting_failure_leaves_the_state_without_a_screenshot(tmp_path, caplog):
    page = FlakyPage(failures=10)
    assert capture(page, tmp_path / "t_01.png", attempts=3, pause_s=0) is None
    assert page.calls == 3 and not (tmp_path / "t_01.png").exists()
    assert "no screenshot for t_01.png after 3 attempts" in caplog.text
