"""The paperworks web app: the single ``st.navigation`` entrypoint.

Every module in ``ui/app_pages`` with a ``PAGE`` dict and a ``render()`` function
becomes a page, grouped by ``PAGE["section"]``. Pages talk to the API only.
"""

from __future__ import annotations

import importlib
import pkgutil

import streamlit as st

from ui import app_pages

st.set_page_config(page_title="paperworks", page_icon="📄", layout="wide")

for key, default in {"selected_job": None, "last_submitted": None}.items():
    st.session_state.setdefault(key, default)


def _pages() -> dict[str, list[st.Page]]:
    found = []
    for info in pkgutil.iter_modules(app_pages.__path__):
        mod = importlib.import_module(f"ui.app_pages.{info.name}")
        meta = getattr(mod, "PAGE", None)
        if meta is None or not callable(getattr(mod, "render", None)):
            continue
        found.append((meta.get("section", "Methods"), meta.get("order", 100), info.name, meta, mod.render))
    sections: dict[str, list[st.Page]] = {}
    for section, _order, name, meta, render in sorted(found, key=lambda t: (t[0] != "Platform", t[0], t[1], t[2])):
        sections.setdefault(section, []).append(
            st.Page(
                render,
                title=meta.get("title", name),
                icon=meta.get("icon"),
                url_path=name,
                default=bool(meta.get("default", False)),
            )
        )
    return sections


st.navigation(_pages()).run()
