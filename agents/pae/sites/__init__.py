"""The self-hosted websites PAE practises on (one process, deterministic seeded content).

``build_sites(seed)`` gives the five sites; :mod:`agents.pae.sites.server` serves them
under ``/<name>/`` of one local HTTP server.
"""

from __future__ import annotations

from agents.pae.sites.base import Site, SiteTask
from agents.pae.sites.dictionary import DictionarySite
from agents.pae.sites.map_site import MapSite
from agents.pae.sites.news import NewsSite
from agents.pae.sites.recipes import RecipeSite
from agents.pae.sites.shop import ShopSite

SITE_CLASSES: dict[str, type[Site]] = {c.name: c for c in (ShopSite, RecipeSite, DictionarySite, NewsSite, MapSite)}
SITE_NAMES: tuple[str, ...] = tuple(SITE_CLASSES)


def build_sites(seed: int = 0) -> dict[str, Site]:
    """One instance of every site, content generated from ``seed``."""
    return {name: cls(seed) for name, cls in SITE_CLASSES.items()}


__all__ = ["SITE_CLASSES", "SITE_NAMES", "Site", "SiteTask", "build_sites"]
