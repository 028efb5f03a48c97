"""The browser's allow-list: only the project's own sites and hosts a user allow-listed.

Every request the browser makes (navigations, sub-resources, form posts) is checked;
anything else is aborted. In particular other ports on loopback (the API, a
database, another user's server), private address ranges and link-local metadata
endpoints are refused, as are non-HTTP schemes. Extra hosts come from
``PAPERWORKS_ALLOWED_HOSTS`` (exact host names or ``host:port``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

_INTERNAL_SCHEMES = ("about:blank", "data:", "blob:")


@dataclass(frozen=True)
class AllowList:
    """``origins``: exact ``host:port`` pairs (the sites server); ``hosts``: user-allowed host names."""

    origins: frozenset[str]
    hosts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def for_sites(cls, base_url: str, extra_hosts: set[str] | frozenset[str] = frozenset()) -> AllowList:
        parts = urlsplit(base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        origins = {f"{(parts.hostname or '').lower()}:{port}"}
        if parts.hostname in ("127.0.0.1", "localhost"):
            origins |= {f"127.0.0.1:{port}", f"localhost:{port}"}
        return cls(frozenset(origins), frozenset(h.lower() for h in extra_hosts))

    def allows(self, url: str) -> bool:
        """True when the browser may load ``url``."""
        if url.startswith(_INTERNAL_SCHEMES):
            return url.startswith("about:blank") or not url.startswith("data:text/html")
        try:
            parts = urlsplit(url)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False
        host = parts.hostname.lower()
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return False
        if f"{host}:{port}" in self.origins:
            return True
        return host in self.hosts or f"{host}:{port}" in self.hosts

    def reason(self, url: str) -> str:
        return f"navigation refused: {url[:120]} is not one of the allowed sites"
