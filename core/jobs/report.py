"""The Report every job returns: title, summary, markdown sections, metrics, tables, artifacts.

A method builds a :class:`Report` in memory, attaching files (PNG images, matplotlib
figures, JSON) with :meth:`Report.add_image`, :meth:`Report.add_figure` or
:meth:`Report.add_file`. When the job ends the runner stores every pending file in
the artifact store and replaces it by an :class:`ArtifactRef` holding the artifact id.

Markdown may reference an artifact by name as ``![caption](artifact:NAME)``; the API,
CLI and UI resolve those links with :meth:`Report.to_markdown`.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

ArtifactKind = Literal["image", "plot", "json", "checkpoint", "file"]
_ARTIFACT_LINK = re.compile(r"artifact:([A-Za-z0-9_.\-/]+)")


class Section(BaseModel):
    """A titled block of markdown."""

    title: str
    markdown: str


class Table(BaseModel):
    """A table: named columns and rows of scalars."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""

    def to_markdown(self, floatfmt: str = ".4g") -> str:
        def fmt(v: Any) -> str:
            if isinstance(v, float):
                return "nan" if math.isnan(v) else format(v, floatfmt)
            return str(v).replace("|", "\\|").replace("\n", " ")

        head = "| " + " | ".join(self.columns) + " |"
        sep = "|" + "|".join("---" for _ in self.columns) + "|"
        body = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in self.rows]
        parts = [f"**{self.title}**", "", head, sep, *body]
        if self.note:
            parts += ["", self.note]
        return "\n".join(parts)


class ArtifactRef(BaseModel):
    """A stored artifact (``id`` set) or one still waiting to be stored."""

    name: str
    kind: ArtifactKind = "file"
    mime: str = "application/octet-stream"
    caption: str = ""
    id: str | None = None
    size: int = 0


class Report(BaseModel):
    """What a job hands back: readable, renderable, and machine-checkable."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    title: str
    summary: str = ""
    sections: list[Section] = Field(default_factory=list)
    metrics: dict[str, float | int | str | bool | None] = Field(default_factory=dict)
    tables: list[Table] = Field(default_factory=list)
    artifacts: list[ArtifactRef] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict, description="Raw JSON results for programs.")

    _pending: dict[str, bytes] = PrivateAttr(default_factory=dict)

    # --- building ------------------------------------------------------------
    def add_section(self, title: str, markdown: str) -> Report:
        self.sections.append(Section(title=title, markdown=markdown))
        return self

    def add_table(self, title: str, columns: list[str], rows: list[list[Any]], note: str = "") -> Table:
        table = Table(title=title, columns=list(columns), rows=[list(r) for r in rows], note=note)
        self.tables.append(table)
        return table

    def add_file(
        self,
        name: str,
        data: bytes | str | Path,
        *,
        kind: ArtifactKind = "file",
        mime: str | None = None,
        caption: str = "",
    ) -> ArtifactRef:
        """Attach bytes (or the contents of a path) as an artifact named ``name``."""
        from core.artifacts.store import guess_mime

        if isinstance(data, Path):
            data = data.read_bytes()
        elif isinstance(data, str):
            data = data.encode("utf-8")
        if any(a.name == name for a in self.artifacts):
            raise ValueError(f"duplicate artifact name {name!r}")
        ref = ArtifactRef(name=name, kind=kind, mime=mime or guess_mime(name), caption=caption, size=len(data))
        self.artifacts.append(ref)
        self._pending[name] = bytes(data)
        return ref

    def add_image(self, name: str, image: Any, *, caption: str = "") -> ArtifactRef:
        """Attach a PIL image, a HxW(x3) uint8/float array, or PNG bytes as a PNG."""
        if isinstance(image, (bytes, bytearray)):
            return self.add_file(name, bytes(image), kind="image", mime="image/png", caption=caption)
        import numpy as np
        from PIL import Image

        if not isinstance(image, Image.Image):
            arr = np.asarray(image)
            if arr.dtype != np.uint8:
                arr = (np.clip(arr, 0.0, 1.0) * 255).round().astype(np.uint8)
            image = Image.fromarray(arr)
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        return self.add_file(name, buf.getvalue(), kind="image", mime="image/png", caption=caption)

    def add_figure(self, name: str, fig: Any, *, caption: str = "", dpi: int = 110) -> ArtifactRef:
        """Attach a matplotlib figure as a PNG plot (and close it)."""
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
        try:
            import matplotlib.pyplot as plt

            plt.close(fig)
        except Exception:  # pragma: no cover - matplotlib always present
            pass
        return self.add_file(name, buf.getvalue(), kind="plot", mime="image/png", caption=caption)

    def add_json(self, name: str, obj: Any, *, caption: str = "") -> ArtifactRef:
        return self.add_file(
            name, json.dumps(obj, indent=2, default=str), kind="json", mime="application/json", caption=caption
        )

    # --- storing -------------------------------------------------------------
    def pending_files(self) -> dict[str, bytes]:
        """Files attached but not yet stored, by artifact name."""
        return dict(self._pending)

    def mark_stored(self, name: str, artifact_id: str) -> None:
        for ref in self.artifacts:
            if ref.name == name:
                ref.id = artifact_id
        self._pending.pop(name, None)

    def artifact(self, name: str) -> ArtifactRef | None:
        return next((a for a in self.artifacts if a.name == name), None)

    # --- rendering -----------------------------------------------------------
    def to_markdown(self, link: Callable[[ArtifactRef], str] | None = None, *, include_artifacts: bool = True) -> str:
        """Render the whole report as Markdown.

        ``link`` maps an artifact to a URL or relative path; by default artifacts are
        linked as ``artifacts/NAME``.
        """
        link = link or (lambda ref: f"artifacts/{ref.name}")
        by_name = {a.name: a for a in self.artifacts}

        def resolve(text: str) -> str:
            return _ARTIFACT_LINK.sub(
                lambda m: link(by_name[m.group(1)]) if m.group(1) in by_name else m.group(0), text
            )

        out = [f"# {self.title}", ""]
        if self.summary:
            out += [resolve(self.summary), ""]
        if self.metrics:
            out += ["## Metrics", "", "| metric | value |", "|---|---|"]
            for k, v in self.metrics.items():
                out.append(f"| {k} | {format(v, '.4g') if isinstance(v, float) else v} |")
            out.append("")
        for s in self.sections:
            out += [f"## {s.title}", "", resolve(s.markdown), ""]
        for t in self.tables:
            out += [t.to_markdown(), ""]
        referenced = {m.group(1) for s in self.sections for m in _ARTIFACT_LINK.finditer(s.markdown)}
        shown = [a for a in self.artifacts if a.name not in referenced]
        if include_artifacts and shown:
            out += ["## Artifacts", ""]
            for a in shown:
                cap = a.caption or a.name
                if a.kind in ("image", "plot"):
                    out += [f"![{cap}]({link(a)})", ""]
                else:
                    out += [f"- [{cap}]({link(a)})"]
            out.append("")
        return "\n".join(out).rstrip() + "\n"

    def write_markdown(self, path: Path, *, artifact_dir_name: str = "") -> Path:
        """Write the report as ``path`` and its files beside it (for ``docs/results``).

        Files go to ``<path.parent>/<artifact_dir_name or path.stem>/NAME`` and the
        markdown links to them relatively.
        """
        path = Path(path)
        sub = artifact_dir_name or path.stem
        folder = path.parent / sub
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in self._pending.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        path.write_text(self.to_markdown(lambda ref: f"{sub}/{ref.name}"), encoding="utf-8")
        return path
