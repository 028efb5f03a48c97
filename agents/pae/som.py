"""Set-of-Marks labelling (spec §3.2, §6): number every visible interactive element of a page.

:data:`LABEL_JS` finds the visible interactive elements in the viewport (``a``,
``button``, ``input``, ``textarea``, ``select``, ``[role=button|link]``, ``[onclick]``),
draws a bordered box with its number at the top-left corner, tags the element with
``data-som="<n>"`` (so an action on ``[n]`` can find it) and returns the element list.
:data:`REMOVE_JS` removes the boxes before an action is executed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

OVERLAY_ID = "__som_overlay__"

LABEL_JS = f"""
() => {{
  const old = document.getElementById('{OVERLAY_ID}'); if (old) old.remove();
  document.querySelectorAll('[data-som]').forEach(e => e.removeAttribute('data-som'));
  const sel = 'a, button, input, textarea, select, [role=button], [role=link], [onclick]';
  const vw = window.innerWidth, vh = window.innerHeight;
  const overlay = document.createElement('div');
  overlay.id = '{OVERLAY_ID}';
  overlay.style.cssText = 'position:absolute;left:0;top:0;pointer-events:none;z-index:2147483647';
  const colors = ['#e6194b','#3cb44b','#4363d8','#f58231','#911eb4','#008080','#9a6324','#800000'];
  const out = [];
  for (const el of document.querySelectorAll(sel)) {{
    if (el.closest('#{OVERLAY_ID}')) continue;
    if (el.tagName === 'INPUT' && (el.type || '').toLowerCase() === 'hidden') continue;
    const st = window.getComputedStyle(el);
    if (st.visibility === 'hidden' || st.display === 'none' || parseFloat(st.opacity) === 0) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    if (r.bottom < 0 || r.right < 0 || r.top > vh || r.left > vw) continue;
    const i = out.length;
    el.setAttribute('data-som', String(i));
    const color = colors[i % colors.length];
    const box = document.createElement('div');
    box.style.cssText = `position:absolute;left:${{r.left + window.scrollX}}px;top:${{r.top + window.scrollY}}px;` +
      `width:${{r.width}}px;height:${{r.height}}px;border:2px dashed ${{color}};box-sizing:border-box`;
    const lab = document.createElement('span');
    lab.textContent = String(i);
    lab.style.cssText = `position:absolute;left:-2px;top:-16px;background:${{color}};color:#fff;` +
      'font:bold 12px monospace;padding:0 3px;line-height:15px';
    box.appendChild(lab);
    overlay.appendChild(box);
    const tag = el.tagName.toLowerCase();
    const text = (el.innerText || el.value || '').replace(/\\s+/g, ' ').trim().slice(0, 80);
    out.push({{index: i, tag: tag, type: (el.getAttribute('type') || '').toLowerCase(), text: text,
              aria: (el.getAttribute('aria-label') || '').slice(0, 80),
              placeholder: (el.getAttribute('placeholder') || '').slice(0, 80),
              href: (el.getAttribute('href') || '').slice(0, 200),
              rect: [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)]}});
  }}
  document.body.appendChild(overlay);
  return out;
}}
"""

REMOVE_JS = f"""
() => {{ const o = document.getElementById('{OVERLAY_ID}'); if (o) o.remove(); return true; }}
"""

PAGE_TEXT_JS = f"""
() => {{
  const o = document.getElementById('{OVERLAY_ID}');
  const main = document.querySelector('main') || document.body;
  const t = (main.innerText || '').replace(/[ \\t]+/g, ' ').replace(/\\n\\s*\\n+/g, '\\n').trim();
  return o ? t.replace(o.innerText || '', '') : t;
}}
"""


@dataclass(frozen=True)
class Element:
    """One labelled element of the page."""

    index: int
    tag: str
    text: str = ""
    type: str = ""
    aria: str = ""
    placeholder: str = ""
    href: str = ""
    rect: tuple[int, int, int, int] = (0, 0, 0, 0)

    @classmethod
    def from_js(cls, d: dict[str, Any]) -> Element:
        return cls(
            index=int(d["index"]),
            tag=str(d["tag"]),
            text=str(d.get("text") or ""),
            type=str(d.get("type") or ""),
            aria=str(d.get("aria") or ""),
            placeholder=str(d.get("placeholder") or ""),
            href=str(d.get("href") or ""),
            rect=tuple(int(v) for v in d.get("rect") or (0, 0, 0, 0)),
        )  # type: ignore[arg-type]

    @property
    def label(self) -> str:
        """The visible text, or the input's aria-label/placeholder, as the table shows it."""
        if self.tag in ("input", "textarea", "select"):
            return self.aria or self.placeholder or self.text
        return self.text or self.aria

    def line(self) -> str:
        """``[i]: <tag> "text"`` — the element table row (spec §3.2)."""
        tag = f"{self.tag} type={self.type}" if self.tag == "input" and self.type not in ("", "text") else self.tag
        return f'[{self.index}]: <{tag}> "{self.label}"'


_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def shown_url(url: str) -> str:
    """``url`` as the models see it: a loopback address without its port.

    The local sites are served on a random free port, so a prompt that showed the port would differ
    between two runs of the same seed and make training (and the judge) irreproducible. Other
    addresses are shown as they are.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return url
    if parts.scheme not in ("http", "https") or host not in _LOOPBACK or parts.port is None:
        return url
    netloc = f"[{host}]" if ":" in host else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def element_table(elements: list[Element]) -> str:
    return "\n".join(e.line() for e in elements)


def label_page(page: Any) -> list[Element]:
    """Draw the marks on a Playwright page and return its labelled elements."""
    return [Element.from_js(d) for d in page.evaluate(LABEL_JS)]


def remove_labels(page: Any) -> None:
    """Remove the boxes (done before every action and before saving the clean DOM)."""
    page.evaluate(REMOVE_JS)


def page_text(page: Any, limit: int = 1500) -> str:
    """The visible text of the page's main content (the text stand-in for the screenshot)."""
    return str(page.evaluate(PAGE_TEXT_JS))[:limit]
