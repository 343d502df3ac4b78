"""What never leaves the member's machine: typed text, denied apps, denied sites.

Applied to our event records before they are batched, so a dry run shows exactly what
would be sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from compiler.entities import site_of


def _host(value: str) -> str:
    host = value.strip().lower().rstrip(".")
    if "://" in host:
        host = site_of(host) or host
    return host.removeprefix("www.")


@dataclass
class Privacy:
    include_text: bool = False
    deny_apps: frozenset[str] = frozenset()
    deny_sites: tuple[str, ...] = ()
    text_removed: int = 0
    denied_app: int = 0
    denied_site: int = 0
    _dropped_snapshots: set[str] = field(default_factory=set)

    @classmethod
    def build(cls, *, include_text: bool, apps: Iterable[str], sites: Iterable[str]) -> Privacy:
        return cls(
            include_text=include_text,
            deny_apps=frozenset(a.strip().casefold() for a in apps if a.strip()),
            deny_sites=tuple(sorted({_host(s) for s in sites if s.strip()})),
        )

    def site_denied(self, url: Any) -> bool:
        if not self.deny_sites or not isinstance(url, str):
            return False
        site = site_of(url)
        if site is None:
            return False
        return any(site == host or site.endswith("." + host) for host in self.deny_sites)

    def app_denied(self, app: Any) -> bool:
        return isinstance(app, str) and app.casefold() in self.deny_apps

    def keep(self, record: dict[str, Any]) -> bool:
        """Whether to send the record; removes typed text from it when not opted in."""
        payload = record["payload"]
        kind = record["kind"]
        if kind == "elements":
            # A tree shows what was on screen: it goes only with its own snapshot.
            return payload.get("snapshot") not in self._dropped_snapshots
        if self.app_denied(payload.get("app")):
            self.denied_app += 1
            self._forget(record)
            return False
        if self.site_denied(payload.get("url")):
            self.denied_site += 1
            self._forget(record)
            return False
        if kind == "input" and "text" in payload and not self.include_text:
            del payload["text"]
            self.text_removed += 1
        return True

    def _forget(self, record: dict[str, Any]) -> None:
        if record["kind"] == "snapshot":
            self._dropped_snapshots.add(record["source_key"])

    def filter(self, records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for record in records:
            if self.keep(record):
                yield record
