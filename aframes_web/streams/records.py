"""Pure validation of incoming event records, shared by the API and every importer.

No Django here: a batch of plain JSON-decoded items goes in, typed records or a list of
``{index, field, message}`` errors come out. Privacy principle 8 is applied here too: typed
text and clipboard content are removed unless the team opted in, and counted.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, NamedTuple

import orjson

DESKTOP = "desktop"
SCOPES = ("desktop", "sports", "home", "code")
DESKTOP_KINDS = ("snapshot", "input", "elements", "absence")
OBSERVATION = "observation"
KINDS = (*DESKTOP_KINDS, OBSERVATION)
INPUT_TYPES = ("key", "text", "click", "clipboard", "app_switch", "scroll")
ELEMENT_SOURCES = ("accessibility", "ocr")

SOURCE_KEY_MAX = 200
MONITOR_MAX = 64
# Fields a record may carry besides its own: what GET events returns, so an export re-imports.
_RECORD_FIELDS = {"occurred_at", "kind", "source_key", "monitor", "payload"}
_EXPORT_ONLY_FIELDS = {"id", "received_at", "entity"}
_ITEM_FIELDS = frozenset(_RECORD_FIELDS | _EXPORT_ONLY_FIELDS)
# Input payload keys that hold what a person typed or copied (principle 8).
TEXT_FIELDS = ("text",)
# Observation payload key for ground truth a source carries (activity labels): stored for the
# benchmark's reference side, never shown to methods, annotators or API callers.
PRIVATE_FIELD = "private"


# A named tuple, not a frozen dataclass: as immutable, and made in a quarter of the time (a
# frozen dataclass sets each field through object.__setattr__: 0.9 against 0.25 us a record,
# for every event of every import).
class EventRecord(NamedTuple):
    occurred_at: datetime  # aware, UTC, microsecond precision
    kind: str
    source_key: str
    monitor: str
    payload: dict[str, Any]
    payload_json: str  # the payload as stored: compact JSON, checked once, written as is


@dataclass(frozen=True, slots=True)
class ItemError:
    index: int
    field: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "field": self.field, "message": self.message}


@dataclass
class ValidatedBatch:
    records: list[EventRecord] = field(default_factory=list)
    errors: list[ItemError] = field(default_factory=list)
    dropped_text_fields: int = 0
    # Items repeating an earlier item's source_key with other content: (index, first index,
    # key). The first is stored, as for any repeat; the sender is told which differed.
    differing_repeats: list[tuple[int, int, str]] = field(default_factory=list)


class FieldInvalid(Exception):
    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message


def parse_timestamp(value: Any, path: str = "occurred_at") -> datetime:
    """An ISO 8601 timestamp with an explicit offset, returned in UTC."""
    if not isinstance(value, str):
        raise FieldInvalid(path, f"must be an ISO 8601 string with an offset, got {_kind(value)}.")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise FieldInvalid(
            path, f"{value!r} is not an ISO 8601 timestamp (e.g. 2026-03-01T09:30:00.125Z)."
        ) from None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise FieldInvalid(
            path,
            f"{value!r} has no UTC offset; naive times are ambiguous: add Z or +HH:MM.",
        )
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        # Year 1 or 9999 with an offset leaves datetime's range once moved to UTC.
        raise FieldInvalid(path, f"{value!r} is outside the years 1 to 9999 in UTC.") from None


# The moments a query may name: a week inside datetime's range, so a window (at most a week)
# and its local days never leave it. No row lies out there; a query may still ask.
QUERY_EARLIEST = datetime.min.replace(tzinfo=UTC) + timedelta(days=8)
QUERY_LATEST = datetime.max.replace(tzinfo=UTC) - timedelta(days=8)


def query_moment(value: str, path: str) -> datetime:
    """A moment a query names (``at``, ``from``, ``to``): :func:`parse_timestamp`, except that
    one beyond what a datetime holds in UTC (year 1 east of UTC, year 9999 west of it) is taken
    at the edge of the range, a week in, so a window around it stays representable."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is not None and parsed.utcoffset() is not None:
        try:
            moment = parsed.astimezone(UTC)
        except OverflowError:
            moment = QUERY_EARLIEST if parsed.year == 1 else QUERY_LATEST
        return min(max(moment, QUERY_EARLIEST), QUERY_LATEST)
    return parse_timestamp(value, path)  # its message says what is not a moment


# The moments an event may hold (UTC): every local day of them, in any zone, is a day that can
# be compiled and closed. Outside, datetime's edges leave no room for a day's bounds.
STORED_FROM = datetime(1900, 1, 1, tzinfo=UTC)
STORED_UNTIL = datetime(2200, 1, 1, tzinfo=UTC)


def event_moment(value: Any, path: str) -> datetime:
    """:func:`parse_timestamp` of a moment an event stores (its time, an interval's end),
    within the years 1900 to 2199."""
    moment = parse_timestamp(value, path)
    if not STORED_FROM <= moment < STORED_UNTIL:
        raise FieldInvalid(
            path,
            f"{value!r} is outside the years 1900 to 2199, the moments events may hold "
            "(a clock or a default value gone wrong).",
        )
    return moment


def format_timestamp(
    value: datetime | None, zone: tzinfo | None = None, *, timespec: str = "microseconds"
) -> str | None:
    """The one spelling of a moment the API, MCP and exports write: RFC 3339 with an explicit
    offset, ``Z`` in UTC (the default zone), the zone's offset otherwise; microseconds unless
    the source is to the second (compiled frames, as their document states them)."""
    if value is None:
        return None
    if zone is not None:  # local times keep their numeric offset, +00:00 included
        return value.astimezone(zone).isoformat(timespec=timespec)
    return value.astimezone(UTC).isoformat(timespec=timespec).removesuffix("+00:00") + "Z"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _text(
    payload: Mapping[str, Any],
    key: str,
    path: str,
    *,
    required: bool = False,
    max_len: int = 4000,
    nullable: bool = True,
) -> None:
    if key not in payload:
        if required:
            raise FieldInvalid(f"{path}.{key}", "is required.")
        return
    value = payload[key]
    if value is None:
        if nullable and not required:
            return
        raise FieldInvalid(f"{path}.{key}", "must be a string, got null.")
    if not isinstance(value, str):
        raise FieldInvalid(f"{path}.{key}", f"must be a string, got {_kind(value)}.")
    if required and not value.strip():
        raise FieldInvalid(f"{path}.{key}", "must not be empty.")
    if len(value) > max_len:
        raise FieldInvalid(f"{path}.{key}", f"is {len(value)} characters; the limit is {max_len}.")


def _number(payload: Mapping[str, Any], key: str, path: str) -> None:
    value = payload.get(key)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FieldInvalid(f"{path}.{key}", f"must be a finite number or null, got {_kind(value)}.")


def _only(payload: Mapping[str, Any], allowed: frozenset[str], path: str) -> None:
    if not payload.keys() <= allowed:
        extra = min(payload.keys() - allowed)
        raise FieldInvalid(
            f"{path}.{extra}",
            f"is not a field of this kind; allowed: {', '.join(sorted(allowed))}.",
        )


_SNAPSHOT_FIELDS = frozenset({"app", "window", "url", "focused", "end"})
_INPUT_FIELDS = frozenset(
    {"type", "x", "y", "app", "window", "url", "element_name", "element_role", "text", "snapshot"}
)
_ELEMENT_FIELDS = frozenset({"role", "name", "bounds", "source", "parent"})
_OBSERVATION_FIELDS = frozenset({"type", "value", "unit", "attributes", "private"})
_ELEMENTS_FIELDS = frozenset({"snapshot", "elements"})
_ABSENCE_FIELDS = frozenset({"end", "reason", "monitor"})


def _check_snapshot(payload: dict[str, Any], path: str) -> None:
    _only(payload, _SNAPSHOT_FIELDS, path)
    _text(payload, "app", path, required=True, max_len=300)
    _text(payload, "window", path, max_len=2000)
    _text(payload, "url", path, max_len=8000)
    if "focused" in payload and not isinstance(payload["focused"], bool | None):
        raise FieldInvalid(
            f"{path}.focused", f"must be a boolean, got {_kind(payload['focused'])}."
        )
    # When an interval source says the row stopped being on screen (compiler.capture.Snapshot).
    if payload.get("end") is not None:
        event_moment(payload["end"], f"{path}.end")


def _check_input(payload: dict[str, Any], path: str) -> None:
    _only(payload, _INPUT_FIELDS, path)
    kind = payload.get("type")
    if kind not in INPUT_TYPES:
        shown = "missing" if kind is None else repr(kind)
        raise FieldInvalid(f"{path}.type", f"is {shown}; expected one of {', '.join(INPUT_TYPES)}.")
    _number(payload, "x", path)
    _number(payload, "y", path)
    for key in ("app", "window", "element_name", "element_role", "snapshot"):
        _text(payload, key, path, max_len=2000)
    _text(payload, "url", path, max_len=8000)
    _text(payload, "text", path, max_len=100_000)


def _check_elements(payload: dict[str, Any], path: str) -> None:
    _only(payload, _ELEMENTS_FIELDS, path)
    _text(payload, "snapshot", path, required=True, max_len=SOURCE_KEY_MAX)
    elements = payload.get("elements")
    if not isinstance(elements, list):
        raise FieldInvalid(f"{path}.elements", f"must be an array, got {_kind(elements)}.")
    for position, element in enumerate(elements):
        where = f"{path}.elements[{position}]"
        if not isinstance(element, dict):
            raise FieldInvalid(where, f"must be an object, got {_kind(element)}.")
        _only(element, _ELEMENT_FIELDS, where)
        _text(element, "role", where, required=True, max_len=200)
        _text(element, "name", where, max_len=4000)
        source = element.get("source")
        if source is not None and source not in ELEMENT_SOURCES:
            raise FieldInvalid(f"{where}.source", f"must be one of {', '.join(ELEMENT_SOURCES)}.")
        parent = element.get("parent")
        if parent is not None and (isinstance(parent, bool) or not isinstance(parent, int)):
            raise FieldInvalid(f"{where}.parent", "must be the index of another element or null.")
        bounds = element.get("bounds")
        if bounds is None:
            continue
        if not isinstance(bounds, list) or len(bounds) != 4:
            raise FieldInvalid(f"{where}.bounds", "must be [left, top, width, height] or null.")
        for value in bounds:
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not -0.01 <= value <= 1.01
            ):
                raise FieldInvalid(
                    f"{where}.bounds",
                    "values are fractions of the screen between 0 and 1.",
                )


def _check_observation(payload: dict[str, Any], path: str) -> None:
    _only(payload, _OBSERVATION_FIELDS, path)
    _text(payload, "type", path, required=True, max_len=100)
    _text(payload, "unit", path, max_len=50)
    value = payload.get("value")
    if isinstance(value, dict | list):
        raise FieldInvalid(f"{path}.value", "must be a number, string, boolean or null.")
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldInvalid(f"{path}.value", "must be finite.")
    for key in ("attributes", "private"):
        if key in payload and not isinstance(payload[key], dict):
            raise FieldInvalid(f"{path}.{key}", f"must be an object, got {_kind(payload[key])}.")


def _check_absence(payload: dict[str, Any], path: str) -> None:
    _only(payload, _ABSENCE_FIELDS, path)
    if "end" not in payload:
        raise FieldInvalid(f"{path}.end", "is required: when the absence ended.")
    event_moment(payload["end"], f"{path}.end")
    _text(payload, "reason", path, max_len=50)
    _text(payload, "monitor", path, max_len=MONITOR_MAX)


_CHECKS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "snapshot": _check_snapshot,
    "input": _check_input,
    "elements": _check_elements,
    "absence": _check_absence,
    OBSERVATION: _check_observation,
}


def kinds_for_scope(scope: str) -> tuple[str, ...]:
    return DESKTOP_KINDS if scope == DESKTOP else (OBSERVATION,)


# The payload as stored. orjson writes it about 4x faster than json (0.8 against 3.3 us for a
# GH Archive summary), and byte for byte the same but for how a float is spelled (1e16 against
# 1e+16: the same number), so json decides wherever the two could differ: orjson writes NaN and
# infinities as null where json refuses them, so output holding a null is searched for such a
# float; what orjson cannot write exactly (a non-string key, an integer beyond 64 bits, a lone
# surrogate, a subclass of a JSON type; datetimes and dataclasses, which json refuses) goes to
# json.
_STD_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
_ORJSON_STRICT = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def dumps_compact(value: Any) -> str:
    """Compact JSON (no spaces, non-ASCII kept), as json writes it.

    Raises ValueError on NaN or an infinity, UnicodeEncodeError on a lone surrogate.
    """
    try:
        out = orjson.dumps(value, option=_ORJSON_STRICT)
    except TypeError:
        text = _STD_COMPACT(value)
        # orjson refuses lone surrogates, which no database can store as UTF-8 either; json
        # writes them, so its output is checked here (a rare path): UnicodeEncodeError.
        text.encode()
        return text
    if b"null" in out and not _finite(value):  # a None, or a NaN or infinity orjson hid
        return _STD_COMPACT(value)  # raises, as it always did
    return out.decode()


def _finite(value: Any) -> bool:
    """Whether no float inside ``value`` is NaN or infinite (a walk of dicts and lists)."""
    kind = type(value)
    if kind is dict:
        items = value.values()
    elif kind is list:
        items = value
    else:
        return kind is not float or math.isfinite(value)
    for item in items:
        kind = type(item)
        if kind is float:
            if not math.isfinite(item):
                return False
        elif (kind is dict or kind is list) and not _finite(item):
            return False
    return True


def content_key(occurred_at: datetime, kind: str, monitor: str, payload: Mapping[str, Any]) -> str:
    """A deterministic source key for records sent without one.

    Text fields are left out so the key does not depend on the team's text setting and leaks
    nothing about what was typed.
    """
    stable = {k: v for k, v in payload.items() if not (kind == "input" and k in TEXT_FIELDS)}
    blob = json.dumps(
        [occurred_at.isoformat(timespec="microseconds"), kind, monitor, stable],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "h:" + hashlib.sha256(blob.encode()).hexdigest()[:40]


def _has_nul(value: Any) -> bool:
    # PostgreSQL cannot store U+0000 in text or jsonb; catch it here with a clear message.
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


def _surrogate_message(bad: UnicodeEncodeError) -> str:
    code = ord(bad.object[bad.start]) if isinstance(bad.object, str) else 0
    return (
        f"contains a lone surrogate (\\u{code:04x}), which is not Unicode text and cannot be "
        "stored; send the character it was half of, or drop it."
    )


def _check_encodable(text: str, path: str) -> None:
    try:
        text.encode()
    except UnicodeEncodeError as bad:
        raise FieldInvalid(path, _surrogate_message(bad)) from None


def check_storable_text(text: str, path: str) -> None:
    """Raise FieldInvalid when ``text`` holds what no database stores as text: U+0000 or a lone
    surrogate (PostgreSQL refuses both; letting them through is a 500, not a message)."""
    if "\x00" in text:
        raise FieldInvalid(path, "contains the NUL character (\\u0000), which cannot be stored.")
    if not text.isascii():
        _check_encodable(text, path)


def validate_item(
    item: Any, *, scope: str, store_text: bool, latest: datetime | None = None
) -> tuple[EventRecord, int]:
    """Check one item; returns the record and how many text fields were dropped. ``latest``:
    the last moment an event may hold (the server's clock plus its tolerance; None: any)."""
    if not isinstance(item, dict):
        raise FieldInvalid("", f"each event must be an object, got {_kind(item)}.")
    if not item.keys() <= _ITEM_FIELDS:
        raise FieldInvalid(
            min(item.keys() - _ITEM_FIELDS),
            f"is not an event field; events have {', '.join(sorted(_RECORD_FIELDS))}.",
        )
    if "occurred_at" not in item:
        raise FieldInvalid("occurred_at", "is required.")
    occurred_at = event_moment(item["occurred_at"], "occurred_at")
    if latest is not None and occurred_at > latest:
        raise FieldInvalid("occurred_at", future_words(item["occurred_at"], occurred_at, latest))
    kind = item.get("kind")
    allowed = kinds_for_scope(scope)
    if kind not in allowed:
        shown = "missing" if kind is None else repr(kind)
        raise FieldInvalid(
            "kind",
            f"is {shown}; a {scope} entity takes {', '.join(allowed)}.",
        )
    monitor = item.get("monitor")
    if monitor is None:
        monitor = "0" if scope == DESKTOP else ""
    elif isinstance(monitor, int) and not isinstance(monitor, bool):
        monitor = str(monitor)
    elif not isinstance(monitor, str):
        monitor = None
    if monitor is None or len(monitor) > MONITOR_MAX:
        # An integer is written out first: a hundred digits are as long as a hundred letters.
        raise FieldInvalid(
            "monitor",
            f"must be a string of at most {MONITOR_MAX} characters or an integer of at most "
            f"{MONITOR_MAX} digits.",
        )
    payload = item.get("payload")
    if not isinstance(payload, dict):
        raise FieldInvalid("payload", f"must be an object, got {_kind(payload)}.")
    _CHECKS[kind](payload, "payload")
    if kind == "absence" and parse_timestamp(payload["end"]) < occurred_at:
        raise FieldInvalid("payload.end", "is before occurred_at; an absence cannot end first.")
    dropped = 0
    if kind == "input" and not store_text:
        present = [key for key in TEXT_FIELDS if payload.get(key) is not None]
        if present:
            payload = {k: v for k, v in payload.items() if k not in present}
            dropped = len(present)
    try:
        payload_json = dumps_compact(payload)
    except UnicodeEncodeError as bad:
        raise FieldInvalid("payload", _surrogate_message(bad)) from None
    except ValueError:
        raise FieldInvalid("payload", "contains NaN or infinity, which JSON cannot hold.") from None
    # JSON escapes U+0000 as \u0000, so one substring test finds it; the walk only confirms
    # (a title may contain the six characters "\u0000" literally).
    if "\\u0000" in payload_json and _has_nul(payload):
        raise FieldInvalid(
            "payload", "contains the NUL character (\\u0000), which cannot be stored."
        )
    source_key = item.get("source_key")
    if source_key is None:
        source_key = content_key(occurred_at, kind, monitor, payload)
    elif not isinstance(source_key, str) or not source_key or len(source_key) > SOURCE_KEY_MAX:
        raise FieldInvalid(
            "source_key", f"must be a non-empty string of at most {SOURCE_KEY_MAX} characters."
        )
    elif "\x00" in source_key:
        raise FieldInvalid("source_key", "contains the NUL character.")
    elif not source_key.isascii():
        _check_encodable(source_key, "source_key")
    if not monitor.isascii():
        _check_encodable(monitor, "monitor")
    return EventRecord(occurred_at, kind, source_key, monitor, payload, payload_json), dropped


def future_words(value: Any, moment: datetime, latest: datetime) -> str:
    """Why an event from the future is refused, with how far ahead it is."""
    ahead = moment - latest
    days, seconds = ahead.days, ahead.seconds
    size = f"{days:,} day{'s' if days != 1 else ''}" if days else f"{max(1, seconds // 3600)} h"
    return (
        f"{value!r} is more than {size} past the latest moment this server takes "
        f"({latest:%Y-%m-%d %H:%M} UTC: its clock plus AFRAMES_FUTURE_TOLERANCE_H); an event "
        "from the future is a clock gone wrong. Fix the sender's clock or the time zone it "
        "writes."
    )


def validate_batch(
    items: Iterable[Any],
    *,
    scope: str,
    store_text: bool,
    start_index: int = 0,
    latest: datetime | None = None,
) -> ValidatedBatch:
    """Validate every item; collect all errors rather than stopping at the first. ``latest``:
    the last moment an event may hold (:func:`validate_item`)."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}")
    batch = ValidatedBatch()
    first: dict[str, tuple[int, EventRecord]] = {}
    for index, item in enumerate(items, start=start_index):
        try:
            record, dropped = validate_item(item, scope=scope, store_text=store_text, latest=latest)
        except FieldInvalid as problem:
            batch.errors.append(ItemError(index, problem.path, problem.message))
            continue
        earlier = first.setdefault(record.source_key, (index, record))
        if earlier[0] != index and _content(earlier[1]) != _content(record):
            batch.differing_repeats.append((index, earlier[0], record.source_key))
        batch.records.append(record)
        batch.dropped_text_fields += dropped
    return batch


def _content(record: EventRecord) -> tuple[Any, ...]:
    return record.occurred_at, record.kind, record.monitor, record.payload_json
