"""Maps: Google Maps (also reached through `google.<tld>/maps`), OpenStreetMap, Apple Maps.

Kinds: `maps_place` (a named place or map feature), `maps_search`, `maps_directions`
(`origin -> destination`). Viewport coordinates (`@48.85,2.29,17z`) are never part of an entity.
"""

from __future__ import annotations

from .ref import PageRef
from .url import Parser, Url, search_text, tidy


def _place_name(segment: str) -> str:
    return tidy(segment.replace("+", " "), 100)


def _route(parts: list[str]) -> str:
    return " -> ".join(part for part in (_place_name(p) for p in parts) if part)


def _is_viewport(segment: str) -> bool:
    return segment.startswith(("@", "data=", "am=")) or segment == ""


def google_maps(url: Url) -> PageRef | None:
    """`/maps/...` on any Google host, and `maps.google.com`."""
    seg = list(url.segments)
    if seg[:1] == ["maps"]:
        seg = seg[1:]
    section = seg[0] if seg else ""
    if section == "place" and len(seg) > 1 and not _is_viewport(seg[1]):
        name = _place_name(seg[1])
        if name:
            return PageRef("maps_place", name)
    if section == "search" and len(seg) > 1 and not _is_viewport(seg[1]):
        text = search_text(seg[1].replace("+", " "))
        if text:
            return PageRef("maps_search", text)
    if section == "dir":
        stops = [part for part in seg[1:] if not _is_viewport(part)]
        if not stops:
            stops = [url.param("origin") or "", url.param("destination") or ""]
        route = _route(stops)
        return PageRef("maps_directions", route) if route else PageRef("page", url.site)
    query = search_text(url.param("q") or url.param("query"))
    if query:
        return PageRef("maps_search", query)
    # A bare viewport: the map is open but no place is named.
    return PageRef("page", url.site)


def _osm(url: Url) -> PageRef | None:
    section, item = url.seg(0), url.seg(1)
    if section in ("node", "way", "relation") and item.isdigit():
        return PageRef("maps_place", f"osm {section}/{item}")
    if section == "search":
        text = search_text(url.param("query"))
        return PageRef("maps_search", text) if text else None
    if section == "directions":
        route = _route([url.param("from") or "", url.param("to") or ""])
        return PageRef("maps_directions", route) if route else None
    return None


def _apple_maps(url: Url) -> PageRef | None:
    if url.param("daddr"):
        route = _route([url.param("saddr") or "", url.param("daddr") or ""])
        if route:
            return PageRef("maps_directions", route)
    address = url.param("address") or url.param("name")
    if address:
        return PageRef("maps_place", _place_name(address))
    text = search_text(url.param("q"))
    return PageRef("maps_search", text) if text else None


HOSTS: dict[str, Parser] = {
    "maps.google.com": google_maps,
    "openstreetmap.org": _osm,
    "maps.apple.com": _apple_maps,
}
