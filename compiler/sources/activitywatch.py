"""An ActivityWatch export (JSON) as a Capture, by emulating capture rows from intervals.

ActivityWatch stores intervals (``timestamp`` + ``duration``), not capture rows. Following the
paper's way of compiling interval data, each window interval becomes snapshot rows every
``HEARTBEAT_S`` seconds; a browser row gets the URL of the web-bucket event that overlaps it
most; AFK intervals become :class:`~compiler.capture.Absence` records. Input events and
element trees do not exist in ActivityWatch.

Accepts a full export (``{"buckets": {id: bucket}}``) or a single bucket (``{id, type, ...,
events}``). Events may be stored newest first, without ids, and AFK events may overlap.

Ids come from each event itself, so every read agrees however much of an export it holds
(another bucket, an older or newer export, one day fetched from a server): an event that starts
at Unix time ``t`` is given the number ``E = floor(t)`` (its start in whole seconds), and the
k-th row of its interval has id ``E * EVENT_STRIDE + k``; a merged absence takes the id of its
first AFK event (k = 0). Window and AFK events that start in the same second are put in order
(start, bucket id, then time, length and data) and each takes the next free number, so a burst
of events in one second numbers them apart. Every id is at least ``ID_FLOOR`` (15 digits, the
fewest that number seconds of this century), above any id the service gives an event it stores,
so the two never meet; the service compiles these rows under the same ids
(:func:`compiler.sources.events.keyed_row_id`), and evidence reads the same everywhere.
"""

from __future__ import annotations

import bisect
import gzip
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import compress, groupby
from operator import itemgetter, not_
from typing import TYPE_CHECKING, Any

from compiler.capture import Absence, Capture, Snapshot, normalise_title
from compiler.sources._common import (
    PathLike,
    SourceError,
    in_window,
    parse_iso,
    plural,
    require_file,
    span_of,
)

if TYPE_CHECKING:
    from compiler.sources import aw_index

RECORDER = "ActivityWatch"
# Activity frames' emulation of interval sources: one row per 30 s heartbeat, the cadence at
# which an event-driven recorder re-captures an unchanged screen.
HEARTBEAT_S = 30.0
EVENT_STRIDE = 10**5  # rows per interval an id can hold: 10^5 x 30 s, about 35 days
ID_EPOCH_S = 10**9  # the earliest start an id is given: 2001-09-09T01:46:40Z
ID_FLOOR = ID_EPOCH_S * EVENT_STRIDE  # the smallest id a row can have
ID_CEILING = 2**53  # the largest id JSON readers hold exactly, far past any real timestamp
MONITOR = "0"  # ActivityWatch records the focused window, not which monitor showed it
EMULATION = (
    "ActivityWatch intervals were emulated as snapshot rows every 30 s; AFK intervals are "
    "absences; ActivityWatch records no input events or element trees."
)
# Browser names as their words appear in app names on macOS, Windows and Linux
# ("Google Chrome", "msedge.exe", "firefox-esr", "Brave Browser"), matched word by word so
# "Archive Utility" is not Arc and "Operations" is not Opera.
BROWSERS = frozenset(
    {"firefox", "chrome", "chromium", "brave", "edge", "safari", "arc", "vivaldi", "opera"}
)
# Chromium-based browsers run the Chrome extension, whose bucket may say "chrome".
_CHROMIUM = frozenset({"chrome", "chromium", "brave", "edge", "vivaldi", "opera", "arc"})
_ALIASES = {"msedge": "edge"}
_WORD = re.compile(r"[a-z0-9]+")

_WINDOW, _WEB, _AFK = "window", "web", "afk"
_KIND_BY_TYPE = {"currentwindow": _WINDOW, "web.tab.current": _WEB, "afkstatus": _AFK}
_KIND_BY_PREFIX = (
    ("aw-watcher-window", _WINDOW),
    ("aw-watcher-web", _WEB),
    ("aw-watcher-afk", _AFK),
)


@dataclass(frozen=True, slots=True)
class _Interval:
    id: int  # id of its first row
    start: float
    end: float
    data: Mapping[str, Any]


def _browser(app: str) -> str | None:
    """The browser an app name denotes, else None."""
    for found in _WORD.findall(app.lower()):
        word = _ALIASES.get(str(found), str(found))
        if word in BROWSERS:
            return word
    return None


def _family(bucket_id: str) -> str | None:
    """The browser a web bucket names (aw-watcher-web-firefox_host -> firefox), if any."""
    rest = bucket_id[len("aw-watcher-web") :]
    if not rest.startswith("-"):
        return None
    name = rest[1:].split("_", 1)[0].lower()
    name = _ALIASES.get(name, name)
    return name if name in BROWSERS else None


def _serves(family: str | None, browser: str) -> bool:
    if family is None or family == browser:
        return True
    return family == "chrome" and browser in _CHROMIUM


def _kind(bucket: Mapping[str, Any]) -> str | None:
    kind = _KIND_BY_TYPE.get(str(bucket.get("type")))
    if kind:
        return kind
    bucket_id = str(bucket.get("id", ""))
    for prefix, prefix_kind in _KIND_BY_PREFIX:
        if bucket_id.startswith(prefix):
            return prefix_kind
    return None


def _load(name: str) -> Any:
    raw, _gzipped = _raw(name)
    return _parsed(name, raw)


def _raw(name: str) -> tuple[bytes, bool]:
    """The export's bytes (unpacked where gzipped) and whether it was gzipped."""
    try:
        with open(name, "rb") as probe:
            gzipped = probe.read(2) == b"\x1f\x8b"
        if not gzipped:
            with open(name, "rb") as handle:
                return handle.read(), False
        with gzip.open(name, "rb") as handle:
            return handle.read(), True
    except (OSError, EOFError) as exc:
        raise SourceError(f"{name}: cannot read the file ({exc}).") from None


def _parsed(name: str, raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SourceError(f"{name}: not a JSON ActivityWatch export ({exc}).") from None


def _buckets(name: str, data: Any) -> list[Mapping[str, Any]]:
    if isinstance(data, Mapping) and "buckets" in data:
        raw = data["buckets"]
        if isinstance(raw, Mapping):
            buckets = []
            for key, bucket in raw.items():
                if not isinstance(bucket, Mapping):
                    raise SourceError(f"{name}: bucket {key!r} is not an object.")
                buckets.append(bucket if "id" in bucket else {**bucket, "id": key})
        elif isinstance(raw, list) and all(isinstance(b, Mapping) for b in raw):
            buckets = list(raw)
        else:
            raise SourceError(f"{name}: 'buckets' must be an object of buckets.")
    elif isinstance(data, Mapping) and "events" in data and "id" in data:
        buckets = [data]
    else:
        raise SourceError(
            f'{name}: not an ActivityWatch export; expected {{"buckets": {{...}}}} or one '
            "bucket with id and events."
        )
    return sorted(buckets, key=lambda bucket: str(bucket.get("id")))


_Keyed = tuple[float, float, Mapping[str, Any]]  # (start, duration, data)


class _Reader:
    def __init__(self, name: str, span: tuple[float, float] | None = None) -> None:
        self.name = name
        self.naive = 0
        # Only events that reach into [span) (with a heartbeat's slack) are kept whole; every
        # event is still checked, so a broken event anywhere fails a read as it always did.
        self.span = span

    def keyed(
        self, bucket: Mapping[str, Any], *, whole: bool
    ) -> tuple[list[_Keyed], list[tuple[int, _Keyed]]]:
        """The bucket's events as (start, duration, data), in the bucket's order: those that
        reach into the reader's span (all of them when ``whole`` or without a span), and the
        others, each with its number (:func:`_number`).

        A real day holds thousands of events and a whole export every day since the watcher
        was installed, so the events are checked in bulk (:func:`_plain`) and one by one
        (:meth:`one_by_one`, which words the error) only where the bulk check finds one
        that is not the common case.
        """
        bucket_id = bucket.get("id")
        events = bucket.get("events", [])
        if not isinstance(events, list):
            raise SourceError(f"{self.name}: bucket {bucket_id!r}: events must be an array.")
        low, high = (-math.inf, math.inf) if whole or self.span is None else self.span
        plain = _plain(events)
        if plain is None:
            return self.one_by_one(bucket_id, events, low - HEARTBEAT_S, high + HEARTBEAT_S)
        starts, lengths, datas, numbers = plain
        items: list[_Keyed] = list(zip(starts, lengths, datas, strict=True))
        if low == -math.inf and high == math.inf:
            return items, []
        low -= HEARTBEAT_S
        high += HEARTBEAT_S
        near = [start < high and start + length >= low for start, length, _data in items]
        return (
            list(compress(items, near)),
            list(compress(zip(numbers, items, strict=True), map(not_, near))),
        )

    def one_by_one(
        self, bucket_id: object, events: list[Any], low: float, high: float
    ) -> tuple[list[_Keyed], list[tuple[int, _Keyed]]]:
        """:meth:`keyed` of ``events`` checked event by event: those starting before ``high``
        and ending at or after ``low``, and the others with their numbers. The first broken
        event is a :class:`SourceError` that names it and says what is wrong."""
        keyed: list[_Keyed] = []
        outside: list[tuple[int, _Keyed]] = []
        earliest, latest = _FIRST_NUMBER, _LAST_NUMBER
        naive = 0
        for index, event in enumerate(events):
            if not isinstance(event, Mapping):
                raise SourceError(f"{self._where(bucket_id, index)}: not an object.")
            stamp = event.get("timestamp")
            try:
                if type(stamp) is not str:
                    raise TypeError(stamp)
                start, was_naive = parse_iso(stamp)
            except (TypeError, ValueError):
                raise SourceError(
                    f"{self._where(bucket_id, index)}: timestamp {stamp!r} is not ISO 8601."
                ) from None
            number = _number(start)
            if not earliest <= number < latest:
                raise SourceError(
                    f"{self._where(bucket_id, index)}: timestamp {stamp!r} is before "
                    "2001-09-09, earlier than any ActivityWatch data, or too far ahead to number."
                )
            naive += was_naive
            duration = event.get("duration", 0)
            if not _seconds(duration):
                raise SourceError(
                    f"{self._where(bucket_id, index)}: duration must be a number of seconds."
                )
            data = event.get("data", {})
            if not isinstance(data, Mapping):
                raise SourceError(f"{self._where(bucket_id, index)}: data must be an object.")
            length = float(duration) if duration > 0 else 0.0
            if start < high and start + length >= low:
                keyed.append((start, length, data))
            else:
                outside.append((number, (start, length, data)))
        self.naive += naive
        return keyed, outside

    def _where(self, bucket_id: object, index: int) -> str:
        return f"{self.name}: bucket {bucket_id!r}, event {index}"


def _seconds(duration: object) -> bool:
    """Whether ``duration`` is a length in seconds: a finite number, not a bool."""
    if not isinstance(duration, int | float) or isinstance(duration, bool):
        return False
    try:
        return math.isfinite(duration)
    except OverflowError:  # an integer too large for a float: no real length
        return False


def _plain(
    events: list[Any],
) -> tuple[list[float], list[float], list[dict[str, Any]], list[int]] | None:
    """Starts, lengths, data and numbers of a bucket's events, checked in bulk, or None where
    any event is not the common case (an object with an aware ISO ``timestamp``, a finite
    ``int`` or ``float`` duration, a ``data`` object, a start that can be numbered).

    A month-long export holds tens of thousands of events, and the command line reads all of
    them to compile one day. Checking each field over the whole bucket at once takes about half
    the time of checking event by event; where this says None, :meth:`_Reader.one_by_one`
    checks event by event and words the error, so a broken event still fails a read as it
    always did.
    """
    try:
        moments = list(map(datetime.fromisoformat, [event["timestamp"] for event in events]))
        durations = [event.get("duration", 0) for event in events]
        datas = [event.get("data", {}) for event in events]
    except (TypeError, KeyError, ValueError, AttributeError):
        return None
    if (
        not all(type(event) is dict for event in events)
        or any(moment.tzinfo is None for moment in moments)
        or not all(type(duration) is float or type(duration) is int for duration in durations)
        or not _seconds(sum(durations))
        or not all(type(data) is dict for data in datas)
    ):
        return None
    starts = [moment.timestamp() for moment in moments]
    numbers = [round(start * 1_000_000) // 1_000_000 for start in starts]  # _number, inlined
    if numbers and not (min(numbers) >= _FIRST_NUMBER and max(numbers) < _LAST_NUMBER):
        return None
    lengths = [float(duration) if duration > 0 else 0.0 for duration in durations]
    return starts, lengths, datas, numbers


def _ordered(keyed: list[_Keyed]) -> list[_Keyed]:
    """``keyed`` sorted by time and length; events of the same instant and length in the order
    of their data, so the ids do not depend on the order the export stored them in."""
    keyed.sort(key=_WHEN)
    if any(
        keyed[i][0] == keyed[i - 1][0] and keyed[i][1] == keyed[i - 1][1]
        for i in range(1, len(keyed))
    ):
        ordered: list[_Keyed] = []
        for _key, group in groupby(keyed, key=_WHEN):
            same = list(group)
            if len(same) > 1:
                same.sort(key=lambda item: json.dumps(item[2], sort_keys=True, default=str))
            ordered.extend(same)
        keyed = ordered
    return keyed


def _ends(keyed: list[_Keyed]) -> list[tuple[float, float, Mapping[str, Any]]]:
    return [(start, start + duration, data) for start, duration, data in keyed]


# The numbers (starts in whole seconds) an event may have: its rows' ids must lie in
# [ID_FLOOR, ID_CEILING - EVENT_STRIDE) (module docstring).
_FIRST_NUMBER = -(-ID_FLOOR // EVENT_STRIDE)
_LAST_NUMBER = -(-(ID_CEILING - EVENT_STRIDE) // EVENT_STRIDE)
_WHEN = itemgetter(0, 1)  # (start, duration): the order of a bucket's events


def _number(start: float) -> int:
    """An event's number E before collisions: its start in whole seconds (Unix time)."""
    return round(start * 1_000_000) // 1_000_000


def _numbered(
    claims: list[tuple[str, list[tuple[float, float, Mapping[str, Any]]]]],
    passed: Sequence[int] = (),
) -> list[list[_Interval]]:
    """Each bucket's intervals with their ids; every claiming event gets its own number E.

    ``claims`` is (bucket id, intervals in bucket order) per bucket; the numbers are handed out
    in the order of (E, start, bucket id, position in the bucket), each the larger of its own E
    and one past the previous one, so events in seconds of their own keep their own E.
    ``passed``: the own numbers of the claiming events a windowed read leaves out, none of
    them the number of an event in ``claims`` (:class:`Export`): they take their turn by
    number, so the numbers given to the others are the ones a whole read gives.
    """
    wanted = sorted(
        (_number(start), start, bucket_id, b, i)
        for b, (bucket_id, intervals) in enumerate(claims)
        for i, (start, _end, _data) in enumerate(intervals)
    )
    given = [[0] * len(intervals) for _bucket_id, intervals in claims]
    others = sorted(passed)
    o, count = 0, len(others)
    last = -1
    for number, _start, _bucket_id, b, i in wanted:
        while o < count and others[o] < number:
            last = others[o] if others[o] > last else last + 1
            o += 1
        last = number if number > last else last + 1  # max(number, last + 1)
        given[b][i] = last
    return [
        [
            _Interval(number * EVENT_STRIDE, start, end, data)
            for number, (start, end, data) in zip(numbers, intervals, strict=True)
        ]
        for numbers, (_bucket_id, intervals) in zip(given, claims, strict=True)
    ]


class _Pages:
    """Web-bucket intervals, searchable by overlap with a time slot."""

    def __init__(self, pages: list[tuple[_Interval, str | None]]) -> None:
        pages.sort(key=lambda page: (page[0].start, page[0].id))
        self.pages = pages
        self.starts = [page.start for page, _family in pages]
        self.reach: list[float] = []  # the latest end among pages[0..i]
        latest = -math.inf
        for page, _family in pages:
            latest = max(latest, page.end)
            self.reach.append(latest)

    def url(
        self, browser: str, slot_start: float, slot_end: float, window: str | None = None
    ) -> str | None:
        """The URL of the page of ``browser`` overlapping [slot_start, slot_end) the most.

        Ties go to the page open at slot_start, then the later one. A zero-length slot (a
        window interval of one heartbeat) takes the page open at that instant. A page whose
        tab title is not part of the ``window`` title is another window's: the extension
        keeps reporting a normal tab while a private window (which it cannot see) is focused,
        and a row is never given a URL that was not on its screen.
        """
        shown = normalise_title(window).casefold() if window else None
        point = slot_end <= slot_start
        best: tuple[float, bool, float, int] | None = None
        found: str | None = None
        j = bisect.bisect_right(self.starts, slot_end) - 1
        while j >= 0 and self.reach[j] >= slot_start:
            page, family = self.pages[j]
            j -= 1
            if point:
                if page.end < slot_start:
                    continue
            elif page.start >= slot_end or (page.end <= slot_start and page.end > page.start):
                continue  # touches the slot's edge only: it belongs to a neighbouring row
            elif page.end < slot_start:
                continue
            if not _serves(family, browser):
                continue
            url = page.data.get("url")
            if not isinstance(url, str) or not url:
                continue
            title = page.data.get("title")
            if shown is not None and isinstance(title, str):
                tab = normalise_title(title).casefold()
                if tab and tab not in shown:
                    continue
            overlap = min(page.end, slot_end) - max(page.start, slot_start)
            score = (overlap, page.start <= slot_start, page.start, page.id)
            if best is None or score > best:
                best, found = score, url
        return found


def read(path: PathLike, start: float | None = None, end: float | None = None) -> Capture:
    """Emulated snapshot rows and AFK absences of [start, end), sorted by (t, id).

    An absence that crosses the window's edge is clipped to it. Only the events near the
    window are kept (:class:`Export`'s ``span``) when it has both ends.
    """
    return open_export(path, span=span_of(start, end)).read(start, end)


def open_export(
    path: PathLike, *, span: tuple[float, float] | None = None, index: bool = False
) -> Export:
    """The export at ``path``, parsed once for any number of windows (:class:`Export`), or
    for the windows within ``span``.

    ``index`` (the command line's reads): a read of a ``span`` uses the export's index where
    one was made from this very file, and makes it where none was (:mod:`aw_index`); what it
    reads is what a read without the index gives.
    """
    name = require_file(path)
    if not index or span is None:
        return Export(_load(name), name=name, span=span)
    from compiler.sources import aw_index

    directory = aw_index.cache_dir()
    held = aw_index.read(directory, name)
    if held is not None:
        indexed = Export.from_index(held, name=name, span=span)
        if indexed is not None:
            return indexed
    try:
        made_from = aw_index.identity(name)
    except OSError as exc:
        raise SourceError(f"{name}: cannot read the file ({exc}).") from None
    raw, gzipped = _raw(name)
    text = walked = None
    if not gzipped and json.detect_encoding(raw) == "utf-8":
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    if text is not None:
        walked = aw_index.parse(text)
    if text is None or walked is None:
        # Gzipped, another encoding or another shape: read as every read does, unindexed.
        return Export(_parsed(name, raw), name=name, span=span)
    data, places = walked
    whole = Export(data, name=name)  # a broken event fails here: no index is written
    try:
        unchanged = aw_index.identity(name) == made_from
    except OSError:
        unchanged = False
    made = whole.indexed(places, text)
    if unchanged:
        aw_index.write(directory, name, made_from, made)
    # The window is read as later calls read it: only the rows near it are emulated.
    return Export.from_index(made, name=name, span=span, blob=raw) or whole


def read_export(
    data: Any, start: float | None = None, end: float | None = None, *, name: str = "export"
) -> Capture:
    """:func:`read` of an export already parsed from JSON; ``name`` heads error messages.

    A read of part of an export (one day's events fetched from a server) gives every row the
    id a read of the whole export gives it: ids come from the events themselves.
    """
    return Export(data, name=name, span=span_of(start, end)).read(start, end)


class Export:
    """An export's buckets parsed, sorted and numbered once; :meth:`read` gives any window.

    A run over many days (the command line's ``--to``) reads the file once instead of once a
    day, and each day's capture is the one a read of that day alone gives.

    ``span`` (Unix seconds [start, end)): only windows within it are read, as the command line
    reads one day (or one range) of an export that holds every day since the watcher was
    installed. Each event is still checked, but only the window and web events that reach into
    the span are sorted, numbered and kept; the numbers the others claim still take their turn,
    so every id (and every capture of a window within the span) is the one a whole read gives.
    The AFK bucket is kept whole: a merged absence takes the id of its first event, which may
    begin long before the span.
    """

    def __init__(
        self, data: Any, *, name: str = "export", span: tuple[float, float] | None = None
    ) -> None:
        buckets = _buckets(name, data)
        reader = _Reader(name, span)
        self.span = span
        # Window and AFK events claim numbers (their rows and absences are emitted); web
        # events are looked up only, numbered by their start alone.
        claiming: list[tuple[str, list[_Keyed], list[tuple[int, _Keyed]]]] = []
        kinds: list[str] = []
        pages: list[tuple[_Interval, str | None]] = []
        seen: dict[str, list[str]] = {_WINDOW: [], _WEB: [], _AFK: []}
        ignored: list[str] = []
        for bucket in buckets:
            kind = _kind(bucket)
            bucket_id = str(bucket.get("id"))
            if kind is None:
                ignored.append(bucket_id)
                continue
            seen[kind].append(bucket_id)
            inside, outside = reader.keyed(bucket, whole=kind == _AFK)
            if kind == _WEB:
                family = _family(bucket_id)
                pages.extend(
                    (_Interval(_number(a) * EVENT_STRIDE, a, b, d), family)
                    for a, b, d in _ends(_ordered(inside))
                )
            else:
                if kind == _AFK:
                    inside = [item for item in inside if item[2].get("status") == "afk"]
                claiming.append((bucket_id, inside, outside))
                kinds.append(kind)
        # An event left out that starts in the same second as one kept is kept too: the two
        # are numbered apart in the order of their data, which needs both.
        taken = {_number(start) for _b, inside, _o in claiming for start, _d, _data in inside}
        passed: list[int] = []
        claims: list[tuple[str, list[tuple[float, float, Mapping[str, Any]]]]] = []
        for bucket_id, inside, outside in claiming:
            for number, item in outside:
                if number in taken:
                    inside.append(item)
                else:
                    passed.append(number)
            claims.append((bucket_id, _ends(_ordered(inside))))
        self.windows: list[_Interval] = []
        self.away: list[_Interval] = []
        for kind, numbered in zip(kinds, _numbered(claims, passed), strict=True):
            (self.windows if kind == _WINDOW else self.away).extend(numbered)
        self.pages = _Pages(pages)
        self.seen = seen
        self.ignored = ignored
        self.naive = reader.naive

    @classmethod
    def from_index(
        cls,
        held: aw_index.Index,
        *,
        name: str,
        span: tuple[float, float],
        blob: bytes | None = None,
    ) -> Export | None:
        """The export at ``name`` (whose bytes are ``blob``, where already read) for the
        windows within ``span``, from its index ``held``: only the window and web events near
        the span are parsed (:mod:`aw_index`); None where the file does not hold what the
        index says (it is then read whole)."""
        from compiler.sources import aw_index

        low, high = span[0] - HEARTBEAT_S, span[1] + HEARTBEAT_S
        windows, pages = held.windows, held.pages
        near_windows = aw_index.near(windows, low, high)
        near_pages = aw_index.near(pages, low, high)
        spans = [(windows["lo"][k], windows["hi"][k]) for k in near_windows]
        spans += [(pages["lo"][k], pages["hi"][k]) for k in near_pages]
        try:
            events = aw_index.events_at(name, spans, blob)
        except (OSError, ValueError):
            return None
        datas: list[Mapping[str, Any]] = []
        for event in events:
            data = event.get("data", {}) if type(event) is dict else None
            if type(data) is not dict:
                return None
            datas.append(data)
        found = iter(datas)
        export = cls.__new__(cls)
        export.span = span
        export.windows = [
            _Interval(windows["id"][k], windows["start"][k], windows["end"][k], next(found))
            for k in near_windows
        ]
        export.pages = _Pages(
            [
                (
                    _Interval(pages["id"][k], pages["start"][k], pages["end"][k], next(found)),
                    held.families[pages["family"][k]],
                )
                for k in near_pages
            ]
        )
        away = held.away
        export.away = [
            _Interval(away["id"][k], away["start"][k], away["end"][k], {})
            for k in range(len(away["id"]))
        ]
        export.seen = held.seen
        export.ignored = held.ignored
        export.naive = held.naive
        return export

    def indexed(self, places: aw_index.Places, text: str) -> aw_index.Index:
        """This export's index (:mod:`aw_index`), for a whole read (no span) of the file whose
        UTF-8 text is ``text``, with ``places`` the offsets of its events in it."""
        from compiler.sources import aw_index

        if self.span is not None:
            raise ValueError("an index is made from a whole read of the export")
        at: dict[int, tuple[int, int]] = {}  # an event's data, by identity: the event's place
        for events, starts, ends in places.values():
            for event, lo, hi in zip(events, starts, ends, strict=True):
                if type(event) is dict and type(event.get("data")) is dict:
                    at[id(event["data"])] = (lo, hi)
        if not text.isascii():  # places in the text, made places in its UTF-8 bytes
            marks = sorted({mark for place in at.values() for mark in place})
            as_bytes = dict(zip(marks, aw_index.byte_offsets(text, marks), strict=True))
            at = {key: (as_bytes[lo], as_bytes[hi]) for key, (lo, hi) in at.items()}

        def place(data: Mapping[str, Any]) -> tuple[int, int]:
            # An event without data was given an empty object of its own: nothing to parse.
            return at.get(id(data), (-1, -1))

        families: list[str | None] = []
        number: dict[str | None, int] = {}
        for _page, family in self.pages.pages:
            if family not in number:
                number[family] = len(families)
                families.append(family)
        windows = sorted(self.windows, key=lambda interval: interval.start)
        return aw_index.Index(
            windows=aw_index.table(
                aw_index.WINDOW_COLUMNS,
                [(i.start, i.end, 0.0, i.id, *place(i.data)) for i in windows],
            ),
            pages=aw_index.table(
                aw_index.PAGE_COLUMNS,
                [
                    (page.start, page.end, 0.0, page.id, *place(page.data), number[family])
                    for page, family in self.pages.pages
                ],
            ),
            away=aw_index.table(aw_index.AWAY_COLUMNS, [(i.start, i.end, i.id) for i in self.away]),
            families=families,
            seen=self.seen,
            ignored=self.ignored,
            naive=self.naive,
        )

    def read(self, start: float | None = None, end: float | None = None) -> Capture:
        """The rows and absences of [start, end), as :func:`read` gives them."""
        if self.span is not None and (
            start is None or end is None or start < self.span[0] or end > self.span[1]
        ):
            raise ValueError(
                f"the window [{start}, {end}) is not within the span this export was read for "
                f"[{self.span[0]}, {self.span[1]})"
            )
        seen = self.seen
        disclosures = [
            EMULATION,
            f"ActivityWatch has no monitors; every row is on monitor {MONITOR}.",
        ]
        snapshots, nameless, truncated = _rows(self.windows, self.pages, start, end)
        absences = _absences(self.away, start, end)

        if len(seen[_WINDOW]) > 1:
            disclosures.append(
                f"{len(seen[_WINDOW])} window buckets ({', '.join(seen[_WINDOW])}) were read "
                f"onto the one monitor {MONITOR}."
            )
        if not seen[_WINDOW]:
            disclosures.append("The export has no window bucket; there are no snapshot rows.")
        if not seen[_WEB]:
            disclosures.append("The export has no web bucket; browser rows carry no URL.")
        if not seen[_AFK]:
            disclosures.append(
                "The export has no AFK bucket; time away from the computer is unknown, not "
                "inactivity."
            )
        if self.ignored:
            disclosures.append(f"Buckets not compiled: {', '.join(self.ignored)}.")
        if nameless:
            disclosures.append(
                f"{plural(nameless, 'window interval')} without an app name "
                f"{'was' if nameless == 1 else 'were'} left out."
            )
        if truncated:
            disclosures.append(
                f"{plural(truncated, 'window interval')} longer than {EVENT_STRIDE:,} "
                f"heartbeats {'was' if truncated == 1 else 'were'} cut at that length."
            )
        if self.naive:
            disclosures.append(
                f"{plural(self.naive, 'timestamp')} had no UTC offset and "
                f"{'was' if self.naive == 1 else 'were'} read as UTC."
            )
        return Capture(
            snapshots=snapshots,
            absences=absences,
            recorder=RECORDER,
            reader="activitywatch",
            disclosures=disclosures,
            inputs_recorded=False,
        )


def _rows(
    windows: list[_Interval], pages: _Pages, start: float | None, end: float | None
) -> tuple[list[Snapshot], int, int]:
    snapshots: list[Snapshot] = []
    nameless = truncated = 0
    for interval in windows:
        count = max(1, math.ceil((interval.end - interval.start) / HEARTBEAT_S))
        cut = count > EVENT_STRIDE
        count = min(count, EVENT_STRIDE)
        # Only the heartbeats near the window are visited; in_window decides exactly.
        first, last = 0, count
        if start is not None:
            first = math.floor(min(max((start - interval.start) / HEARTBEAT_S, 0.0), count))
        if end is not None:
            last = math.ceil(min(max((end - interval.start) / HEARTBEAT_S + 1, 0.0), count))
        if first >= last:
            continue
        app = interval.data.get("app")
        if not isinstance(app, str) or not app:
            nameless += 1
            continue
        truncated += cut
        title = interval.data.get("title")
        window = title if isinstance(title, str) and title else None
        browser = _browser(app)
        for k in range(first, last):
            t = interval.start + k * HEARTBEAT_S
            if not in_window(t, start, end):
                continue
            url = None
            if browser is not None:
                url = pages.url(browser, t, min(t + HEARTBEAT_S, max(interval.end, t)), window)
            # Each row carries its event's true end, so no row is credited past it.
            snapshots.append(Snapshot(interval.id + k, t, MONITOR, app, window, url, interval.end))
    snapshots.sort(key=lambda s: (s.t, s.id))
    return snapshots, nameless, truncated


def _absences(away: list[_Interval], start: float | None, end: float | None) -> list[Absence]:
    """AFK intervals merged where they overlap, clipped to the window."""
    merged: list[tuple[int, float, float]] = []
    for interval in sorted(away, key=lambda i: (i.start, i.id)):
        if interval.end <= interval.start:
            continue  # a single heartbeat says nothing about how long nobody was there
        # Touching intervals stay apart: the input that ended one AFK span was a presence.
        if merged and interval.start < merged[-1][2]:
            first, a, b = merged[-1]
            merged[-1] = (first, a, max(b, interval.end))
        else:
            merged.append((interval.id, interval.start, interval.end))
    low = -math.inf if start is None else start
    high = math.inf if end is None else end
    return [
        Absence(absence_id, max(a, low), min(b, high))
        for absence_id, a, b in merged
        if a < high and b > low
    ]
