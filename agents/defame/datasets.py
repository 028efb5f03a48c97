"""Benchmark loaders: AVeriTeC (dev.json), MOCHEG (Corpus2.csv and the official dry-run sample), VERITE.

Each loader yields :class:`Item`: an id, the graph's claim dict, the gold label
as the dataset writes it, and the raw row (for scoring and corpora).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.defame.tools.filters import parse_date


@dataclass
class Item:
    id: str
    claim: dict[str, Any]
    gold: str
    raw: dict[str, Any] = field(default_factory=dict)


def _claim(
    text: str,
    *,
    date: str | None = None,
    author: str | None = None,
    images: dict[str, str] | None = None,
    claim_id: str | None = None,
) -> dict[str, Any]:
    d = parse_date(date) if date else None
    return {
        "text": text,
        "images": images or {},
        "date": d.isoformat() if d else None,
        "author": author,
        "origin": None,
        "claim_id": claim_id,
    }


def load_averitec(path: str | Path, *, limit: int | None = None, offset: int = 0) -> list[Item]:
    """AVeriTeC ``dev.json``: the claim id is the list index; dates are DD-MM-YYYY."""
    rows = json.loads(Path(path).read_text(encoding="utf-8"))
    end = len(rows) if limit is None else min(len(rows), offset + limit)
    return [
        Item(
            id=str(i),
            claim=_claim(rows[i]["claim"], date=rows[i].get("claim_date"), author=rows[i].get("speaker")),
            gold=rows[i]["label"],
            raw=rows[i],
        )
        for i in range(offset, end)
    ]


def load_mocheg(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """MOCHEG: the full release's ``Corpus2.csv`` (``claim_id, Claim, Evidence, cleaned_truthfulness,
    ruling_outline``; deduplicated by claim id, rows without a ruling outline dropped) or the official
    dry-run sample (``truth_claim_evidence`` = ``label </s> claim </s> evidence``)."""
    items: list[Item] = []
    seen: set[str] = set()
    with open(path, newline="", encoding="utf-8") as f:
        for i, row in enumerate(csv.DictReader(f)):
            if "truth_claim_evidence" in row:
                parts = [p.strip() for p in row["truth_claim_evidence"].split("</s>")]
                text = parts[1] if len(parts) > 1 else parts[0]
                cid = str(i)
                evidence = row.get("Evidence") or (parts[2] if len(parts) > 2 else "")
            else:
                cid = str(row.get("claim_id"))
                if cid in seen or not (row.get("ruling_outline") or "").strip():
                    continue
                text, evidence = row["Claim"], row.get("Evidence") or ""
            seen.add(cid)
            items.append(
                Item(
                    id=cid,
                    claim=_claim(text.strip()),
                    gold=row["cleaned_truthfulness"].strip(),
                    raw={"evidence": evidence, **{k: v for k, v in row.items() if k != "Evidence"}},
                )
            )
            if limit is not None and len(items) >= limit:
                break
    return items


def load_verite(path: str | Path, image_root: str | Path | None = None, *, limit: int | None = None) -> list[Item]:
    """VERITE.csv rows whose image exists under ``image_root`` (the CSV alone ships no images)."""
    root = Path(image_root) if image_root else Path(path).parent
    items = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            img = root / row["image_path"]
            if not img.exists():
                continue
            items.append(
                Item(
                    id=str(row.get("") or len(items)),
                    claim=_claim(f"<image:1> {row['caption']}", images={"1": str(img)}),
                    gold=row["label"],
                    raw=row,
                )
            )
            if limit is not None and len(items) >= limit:
                break
    return items


def load(kind: str, path: str | Path, *, limit: int | None = None) -> list[Item]:
    if kind == "averitec":
        return load_averitec(path, limit=limit)
    if kind == "mocheg":
        return load_mocheg(path, limit=limit)
    if kind == "verite":
        return load_verite(path, limit=limit)
    raise ValueError(f"unknown dataset kind {kind!r}")


def mocheg_documents(items: list[Item]) -> list[dict[str, Any]]:
    """An oracle corpus for MOCHEG: each row's ``Evidence`` text, split into paragraphs of ≤ 1,500 chars."""
    docs = []
    for it in items:
        text = (it.raw.get("evidence") or "").strip()
        for k in range(0, len(text), 1500):
            docs.append(
                {
                    "id": f"mo-{it.id}-{k // 1500}",
                    "text": text[k : k + 1500],
                    "url": f"mocheg://evidence/{it.id}/{k // 1500}",
                    "gold_for": it.id,
                }
            )
    return docs
