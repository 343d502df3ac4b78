"""Calendars and events: Google Calendar, Meetup, Eventbrite (every country domain), Luma,
Calendly, Cal.com.

Google Calendar event ids (`eid`) encode the organiser's e-mail address, so an event entity is a
digest of the id, never the id itself. A calendar view is `view YYYY-MM-DD` when the URL has a date.
"""

from __future__ import annotations

from .ref import PageRef
from .url import Parser, Url, is_number, short_id, slug_words, tidy

_CALENDAR_VIEWS = frozenset({"day", "week", "month", "year", "agenda", "customday", "customweek"})


def _google_calendar(url: Url) -> PageRef | None:
    seg = list(url.segments)
    if seg[:1] == ["calendar"]:
        seg = seg[1:]
    if len(seg) >= 2 and seg[0] == "u" and is_number(seg[1]):
        seg = seg[2:]
    eid = url.param("eid")
    if seg[:1] == ["event"] and eid:
        return PageRef("calendar_event", short_id(eid, keep=0))
    if seg[:1] == ["r"]:
        seg = seg[1:]
    view = seg[0] if seg else ""
    if view in ("eventedit", "event") and len(seg) >= 2:
        return PageRef("calendar_event", short_id(seg[1], keep=0))
    if view in _CALENDAR_VIEWS:
        date = seg[1:4]
        if len(date) == 3 and all(is_number(part) and len(part) <= 4 for part in date):
            year, month, day = date
            return PageRef("google_calendar", f"{view} {year}-{month.zfill(2)}-{day.zfill(2)}")
        return PageRef("google_calendar", view)
    return PageRef("calendar", url.site)


_MEETUP_RESERVED = frozenset(
    {"find", "login", "register", "home", "apps", "topics", "members", "messages", "notifications"}
)


def _meetup(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg or seg[0] in _MEETUP_RESERVED:
        return None
    group = seg[0]
    if len(seg) >= 3 and seg[1] == "events" and is_number(seg[2]):
        return PageRef("meetup_event", f"{group}/{seg[2]}")
    return PageRef("meetup_group", group)


def _eventbrite(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] in ("e", "o"):
        slug = seg[1]
        name, _, event_id = slug.rpartition("-")
        if not is_number(event_id):
            name, event_id = slug, ""
        name = tidy(slug_words(name.removesuffix("-tickets")), 80)
        label = f"{name} ({event_id})" if name and event_id else name or event_id
        if label:
            return PageRef("eventbrite_event" if seg[0] == "e" else "eventbrite_organizer", label)
    return None


_LUMA_RESERVED = frozenset(
    {"home", "discover", "calendar", "signin", "login", "create", "settings", "explore", "pricing"}
)


def _luma(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg or seg[0] in _LUMA_RESERVED:
        return None
    if seg[0] in ("user", "u"):
        # A profile's page; the bare path names nobody.
        return PageRef("luma_user", seg[1]) if len(seg) >= 2 else None
    return PageRef("luma_event", seg[0])


def _booking_page(kind: str, reserved: frozenset[str]) -> Parser:
    def parse(url: Url) -> PageRef | None:
        seg = url.segments
        if not seg or seg[0] in reserved:
            return None
        if len(seg) >= 2:
            return PageRef(f"{kind}_event", f"{seg[0]}/{seg[1]}")
        return PageRef(f"{kind}_user", seg[0])

    return parse


_BOOKING_RESERVED = frozenset(
    {"app", "login", "signup", "pricing", "event_types", "integrations", "settings", "bookings"}
)

HOSTS: dict[str, Parser] = {
    "calendar.google.com": _google_calendar,
    "meetup.com": _meetup,
    "eventbrite.com": _eventbrite,
    "lu.ma": _luma,
    "luma.com": _luma,
    "calendly.com": _booking_page("calendly", _BOOKING_RESERVED),
    "cal.com": _booking_page("cal", _BOOKING_RESERVED),
}
BRANDS: dict[str, Parser] = {"eventbrite": _eventbrite}
