"""WordWise: a dictionary (look up a word: part of speech, definitions, synonyms, example, pronunciation)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse

from agents.pae.sites.base import Site, SiteTask, esc, page

# (word, part of speech, definition, synonyms, pronunciation)
ENTRIES: tuple[tuple[str, str, str, tuple[str, ...], str], ...] = (
    ("abundant", "adjective", "existing in large quantities; more than enough", ("plentiful", "ample"), "uh-BUN-duhnt"),
    ("benevolent", "adjective", "well meaning and kindly", ("kind", "generous"), "buh-NEV-uh-luhnt"),
    ("candid", "adjective", "truthful and straightforward; frank", ("frank", "honest"), "KAN-did"),
    ("diligent", "adjective", "having or showing care in one's work", ("hardworking", "careful"), "DIL-i-juhnt"),
    (
        "eloquent",
        "adjective",
        "fluent or persuasive in speaking or writing",
        ("articulate", "expressive"),
        "EL-uh-kwuhnt",
    ),
    ("fragile", "adjective", "easily broken or damaged", ("delicate", "brittle"), "FRAJ-uhl"),
    ("gather", "verb", "come together; assemble or accumulate", ("collect", "assemble"), "GATH-er"),
    ("harbor", "noun", "a place on the coast where vessels may find shelter", ("port", "haven"), "HAR-ber"),
    ("illuminate", "verb", "light up; help to clarify or explain", ("light", "clarify"), "ih-LOO-muh-neyt"),
    (
        "jubilant",
        "adjective",
        "feeling or expressing great happiness and triumph",
        ("joyful", "elated"),
        "JOO-buh-luhnt",
    ),
    ("kindle", "verb", "light or set on fire; arouse a feeling", ("ignite", "spark"), "KIN-dl"),
    ("lucid", "adjective", "expressed clearly; easy to understand", ("clear", "coherent"), "LOO-sid"),
    ("meander", "verb", "follow a winding course", ("wander", "wind"), "mee-AN-der"),
    ("nimble", "adjective", "quick and light in movement or action", ("agile", "spry"), "NIM-buhl"),
    ("obscure", "adjective", "not discovered or known about; uncertain", ("unclear", "vague"), "uhb-SKYOOR"),
    ("ponder", "verb", "think about something carefully", ("consider", "reflect"), "PON-der"),
    ("quarrel", "noun", "an angry argument or disagreement", ("argument", "dispute"), "KWOR-uhl"),
    ("resilient", "adjective", "able to recover quickly from difficulties", ("tough", "hardy"), "ri-ZIL-yuhnt"),
    ("serene", "adjective", "calm, peaceful and untroubled", ("calm", "tranquil"), "suh-REEN"),
    ("tedious", "adjective", "too long, slow or dull; tiresome", ("boring", "monotonous"), "TEE-dee-uhs"),
    ("utmost", "adjective", "most extreme; greatest", ("greatest", "maximum"), "UHT-mohst"),
    ("vivid", "adjective", "producing powerful feelings or strong, clear images", ("bright", "graphic"), "VIV-id"),
    ("wander", "verb", "walk or move in a leisurely or aimless way", ("roam", "stroll"), "WON-der"),
    ("yearn", "verb", "have an intense feeling of longing", ("long", "crave"), "YURN"),
    ("zeal", "noun", "great energy or enthusiasm for a cause", ("passion", "fervor"), "ZEEL"),
    ("anchor", "noun", "a heavy object used to moor a vessel to the sea bottom", ("mooring", "kedge"), "ANG-ker"),
    ("brisk", "adjective", "active, fast and energetic", ("quick", "rapid"), "BRISK"),
    ("cluster", "noun", "a group of similar things positioned closely together", ("bunch", "group"), "KLUHS-ter"),
    ("devour", "verb", "eat hungrily or quickly", ("gobble", "consume"), "dih-VOUR"),
    ("ember", "noun", "a small piece of burning wood or coal in a dying fire", ("cinder", "ash"), "EM-ber"),
)


@dataclass(frozen=True)
class Entry:
    word: str
    pos: str
    definition: str
    synonyms: tuple[str, ...]
    pronunciation: str
    example: str


class DictionarySite(Site):
    name = "dictionary"
    title = "WordWise Dictionary"
    description = "An English dictionary: look up a word to see its part of speech, definition, synonyms, example."
    demos = (
        "What part of speech is the word 'serene'?",
        "Give a synonym of 'lucid'.",
        "How is the word 'meander' pronounced?",
    )

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        rng = random.Random(f"dictionary:{seed}")
        subjects = ("The team", "My neighbour", "The river", "Our teacher", "The old cat", "A traveller")
        self.entries = {
            w: Entry(w, pos, d, syn, pr, f"{rng.choice(subjects)} was described as '{w}'.")
            for w, pos, d, syn, pr in ENTRIES
        }

    def _page(self, body: str, title: str = "", query: str = "") -> HTMLResponse:
        return HTMLResponse(
            page(
                self.title,
                "/dictionary/",
                body,
                title=title,
                search_action="/dictionary/search",
                search_placeholder="Look up a word",
                query=query,
            )
        )

    def router(self) -> APIRouter:
        r = APIRouter()

        @r.get("/", response_class=HTMLResponse)
        def home() -> HTMLResponse:
            letters = sorted({w[0] for w in self.entries})
            links = " ".join(f"<a href='/dictionary/browse/{c}'>{c.upper()}</a>" for c in letters)
            return self._page(f"<h1>WordWise Dictionary</h1><p>Browse: {links}</p>")

        @r.get("/search")
        def search(q: str = ""):
            word = q.strip().lower()[:60]
            if word in self.entries:
                return RedirectResponse(f"/dictionary/word/{word}", status_code=303)
            close = [w for w in self.entries if word and (word in w or w in word)]
            links = "".join(f"<li><a href='/dictionary/word/{w}'>{w}</a></li>" for w in close)
            return self._page(f"<p>No exact entry for '{esc(word)}'.</p><ul>{links}</ul>", query=q)

        @r.get("/browse/{letter}", response_class=HTMLResponse)
        def browse(letter: str) -> HTMLResponse:
            ws = sorted(w for w in self.entries if w.startswith(letter[:1].lower()))
            links = "".join(f"<li><a href='/dictionary/word/{w}'>{w}</a></li>" for w in ws)
            return self._page(f"<h2>Words starting with {esc(letter.upper()[:1])}</h2><ul>{links}</ul>")

        @r.get("/word/{word}", response_class=HTMLResponse)
        def word(word: str) -> HTMLResponse:
            e = self.entries.get(word.lower())
            if e is None:
                return self._page("<p>Word not found.</p>")
            syn = ", ".join(e.synonyms)
            return self._page(
                f"<h1>{esc(e.word)}</h1><p class='muted'>/{esc(e.pronunciation)}/</p><p><i>{e.pos}</i></p>"
                f"<p>Definition: {esc(e.definition)}</p><p>Synonyms: {esc(syn)}</p>"
                f"<p>Example: {esc(e.example)}</p>",
                title=e.word,
                query=e.word,
            )

        return r

    def template_tasks(self, rng: random.Random, n: int) -> list[SiteTask]:
        out: list[SiteTask] = []
        kinds = ["pos", "synonym", "pronounce", "definition"]
        words = sorted(self.entries)
        for i in range(n):
            kind = kinds[i % len(kinds)]
            e = self.entries[rng.choice(words)]
            look = [("type", "Look up a word", e.word)]
            if kind == "pos":
                out.append(
                    self.task(
                        f"pos-{e.word}",
                        f"What part of speech is the word '{e.word}'?",
                        e.pos,
                        [*look, ("answer", "", e.pos)],
                        kind,
                    )
                )
            elif kind == "synonym":
                out.append(
                    self.task(
                        f"synonym-{e.word}",
                        f"Give a synonym of the word '{e.word}'.",
                        list(e.synonyms),
                        [*look, ("answer", "", e.synonyms[0])],
                        kind,
                        kind="one_of",
                    )
                )
            elif kind == "pronounce":
                out.append(
                    self.task(
                        f"pronounce-{e.word}",
                        f"How is the word '{e.word}' pronounced?",
                        e.pronunciation,
                        [*look, ("answer", "", e.pronunciation)],
                        kind,
                    )
                )
            else:
                first = e.definition.split(";")[0]
                out.append(
                    self.task(
                        f"definition-{e.word}",
                        f"What does the word '{e.word}' mean?",
                        first,
                        [*look, ("answer", "", first)],
                        kind,
                    )
                )
        return out
