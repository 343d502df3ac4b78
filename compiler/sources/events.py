"""Our own event records (``snapshot`` | ``input`` | ``elements``) as a Capture.

The one converter for event records: the JSONL reader streams through it and the Django side
calls :func:`capture_from_records` for stored Event rows. A record is a mapping with
``occurred_at`` (ISO 8601 with an offset), ``kind``, ``monitor``, ``payload`` and optionally
``id`` (int) and ``source_key``, as ``aframes_web.streams.records`` defines it.

Ids: a record's ``id`` when it has one (stored Event rows do); otherwise its 1-based position
in the input, counting every record (``elements`` records and rows outside the window too), so
the same input gives the same ids for any window. Do not mix records with and without ids
unless the ids cannot meet the positions; a clash raises :class:`SourceError`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from compiler.capture import INPUT_TYPES, Absence, Capture, Element, InputEvent, Snapshot
from compiler.sources import activitywatch
from compiler.sources._common import SourceError, in_window, plural, utc_iso

RECORDER = "aframes"
KINDS = ("snapshot", "input", "elements", "absence")
_INPUT_TYPES = frozenset(INPUT_TYPES)
# One element of a tree before its snapshot's id is known: (role, name, bounds).
_Node = tuple[str, str | None, tuple[float, float, float, float] | None]


class RecordInvalid(Exception):
    """One record is malformed; the caller adds where it is (``file:line`` or ``record N``)."""


def _text(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    if value is None or isinstance(value, str):
        return value
    raise RecordInvalid(f"payload.{key} must be a string or null, got {type(value).__name__}.")


def _instant(payload: Mapping[str, Any], key: str) -> float | None:
    """An optional ISO 8601 time with an offset, as UTC seconds."""
    value = payload.get(key)
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.utcoffset() is None:
        raise RecordInvalid(f"payload.{key} must be an ISO 8601 timestamp with an offset.")
    return moment.timestamp()


def _number(payload: Mapping[str, Any], key: str) -> float | None:
    value = payload.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RecordInvalid(f"payload.{key} must be a finite number or null.")
    return float(value)


def _bounds(value: Any, where: str) -> tuple[float, float, float, float] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple) or len(value) != 4:
        raise RecordInvalid(f"{where}.bounds must be [left, top, width, height] or null.")
    out: list[float] = []
    for number in value:
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise RecordInvalid(f"{where}.bounds holds a non-number.")
        out.append(float(number))
    return out[0], out[1], out[2], out[3]


def _elements(payload: Mapping[str, Any]) -> list[_Node]:
    items = payload.get("elements")
    if not isinstance(items, list):
        raise RecordInvalid("payload.elements must be an array.")
    out: list[_Node] = []
    for index, item in enumerate(items):
        where = f"payload.elements[{index}]"
        if not isinstance(item, Mapping):
            raise RecordInvalid(f"{where} must be an object.")
        role = item.get("role")
        if not isinstance(role, str):
            raise RecordInvalid(f"{where}.role must be a string.")
        name = item.get("name")
        if name is not None and not isinstance(name, str):
            raise RecordInvalid(f"{where}.name must be a string or null.")
        out.append((role, name, _bounds(item.get("bounds"), where)))
    return out


EMULATED_PREFIX = "aw:s"  # snapshot keys of the ActivityWatch importer and sync agent
EMULATED_AWAY = "aw:a"


def keyed_row_id(source_key: str | None) -> int | None:
    """The row id a source key fixes, or None when the store's own id is the row's.

    ActivityWatch rows carry their reader's ids in their keys (``aw:s<id>``, ``aw:a<id>``),
    derived from the events themselves and never below ``activitywatch.ID_FLOOR``, so a day
    compiled from stored events cites the rows ``python -m compiler day`` cites for the same
    export, and the two id spaces never meet.
    """
    if source_key is None or not source_key.startswith((EMULATED_PREFIX, EMULATED_AWAY)):
        return None
    digits = source_key[len(EMULATED_PREFIX) :]
    if not digits.isascii() or not digits.isdigit() or len(digits) > 16:
        return None
    row = int(digits)
    return row if activitywatch.ID_FLOOR <= row < activitywatch.ID_CEILING else None


def row_key(row_id: int) -> tuple[str, str] | None:
    """The source keys (snapshot, absence) a row id beyond the store's own ids is stored under."""
    if not activitywatch.ID_FLOOR <= row_id < activitywatch.ID_CEILING:
        return None
    return f"{EMULATED_PREFIX}{row_id}", f"{EMULATED_AWAY}{row_id}"


class RecordConverter:
    """Streams records in, keeps those of the window [start, end), and builds the Capture.

    ``add`` raises :class:`RecordInvalid` for a malformed record; nothing is kept from it.
    """

    def __init__(self, start: float | None = None, end: float | None = None) -> None:
        self.start = start
        self.end = end
        self.snapshots: list[Snapshot] = []
        self.inputs: list[InputEvent] = []
        self.absences: list[Absence] = []
        self._ids: dict[int, int] = {}  # id -> position, for every snapshot and input row
        self._keys: set[str] = set()  # every source_key seen, for idempotent re-reads
        self._snapshot_keys: set[str] = set()  # every snapshot key, kept or not
        self._kept: dict[str, Snapshot] = {}  # key -> snapshot in the window
        # Trees whose snapshot has not been seen yet: (snapshot key, position, inside, tree).
        self._waiting: list[tuple[str, int, bool, list[_Node]]] = []
        self._trees: list[tuple[Snapshot, int, list[_Node]]] = []
        self.orphan_trees = 0
        self.repeated = 0
        # Snapshot rows emulated from ActivityWatch intervals (source keys "aw:s<id>", as the
        # importer and aframes-sync send them), and AFK absences of that source, in the window.
        self.emulated = 0
        self.emulated_away = 0

    def add(self, record: object, position: int) -> None:
        if not isinstance(record, Mapping):
            raise RecordInvalid(f"an event record must be an object, got {type(record).__name__}.")
        stamp = record.get("occurred_at")
        if isinstance(stamp, datetime):
            moment = stamp  # stored events arrive as aware datetimes; no need to print and parse
        elif isinstance(stamp, str):
            try:
                moment = datetime.fromisoformat(stamp)
            except ValueError:
                raise RecordInvalid(
                    f"occurred_at {stamp!r} is not an ISO 8601 timestamp."
                ) from None
        else:
            raise RecordInvalid("occurred_at must be an ISO 8601 string with an offset.")
        if moment.utcoffset() is None:
            raise RecordInvalid(f"occurred_at {stamp!r} has no UTC offset; add Z or +HH:MM.")
        t = moment.timestamp()
        kind = record.get("kind")
        if kind not in KINDS:
            raise RecordInvalid(f"kind is {kind!r}; a desktop record is one of {', '.join(KINDS)}.")
        monitor = record.get("monitor")
        if monitor is None:
            monitor = "0"
        elif isinstance(monitor, int) and not isinstance(monitor, bool):
            monitor = str(monitor)
        elif not isinstance(monitor, str):
            raise RecordInvalid("monitor must be a string, an integer or null.")
        payload = record.get("payload")
        if not isinstance(payload, Mapping):
            raise RecordInvalid("payload must be an object.")
        key = record.get("source_key")
        if key is not None and not isinstance(key, str):
            raise RecordInvalid("source_key must be a string or null.")
        inside = in_window(t, self.start, self.end)

        if key is not None:
            # Ingestion is idempotent on source_key; a file holding a record twice reads once.
            if key in self._keys:
                self.repeated += inside
                return
            self._keys.add(key)

        if kind == "elements":
            snapshot_key = payload.get("snapshot")
            if not isinstance(snapshot_key, str):
                raise RecordInvalid("payload.snapshot must be the source_key of a snapshot.")
            tree = _elements(payload)
            owner = self._kept.get(snapshot_key)
            if owner is not None:
                self._trees.append((owner, position, tree))
            elif snapshot_key not in self._snapshot_keys:
                # The snapshot may still come; only a tree of the window counts as an orphan.
                self._waiting.append((snapshot_key, position, inside, tree))
            return

        row_id = record.get("id")
        if row_id is None:
            row_id = position
        elif isinstance(row_id, bool) or not isinstance(row_id, int):
            raise RecordInvalid("id must be an integer or absent.")
        earlier = self._ids.get(row_id)
        if earlier is not None:
            raise RecordInvalid(f"id {row_id} is already used by record {earlier}.")
        self._ids[row_id] = position

        if kind == "absence":
            if self._absence(row_id, t, payload) and key and key.startswith(EMULATED_AWAY):
                self.emulated_away += 1
            return

        if kind == "snapshot":
            app = payload.get("app")
            if not isinstance(app, str) or not app:
                raise RecordInvalid("payload.app must be a non-empty string.")
            snapshot = Snapshot(
                row_id,
                t,
                monitor,
                app,
                _text(payload, "window"),
                _text(payload, "url"),
                _instant(payload, "end"),
            )
            if key is not None:
                self._snapshot_keys.add(key)
            if not inside:
                return
            if key is not None and key.startswith(EMULATED_PREFIX):
                self.emulated += 1
            self.snapshots.append(snapshot)
            if key is not None:
                self._kept[key] = snapshot
            return

        kind_of_input = payload.get("type")
        if kind_of_input not in _INPUT_TYPES:
            raise RecordInvalid(
                f"payload.type is {kind_of_input!r}; expected one of {', '.join(INPUT_TYPES)}."
            )
        event = InputEvent(
            row_id,
            t,
            kind_of_input,
            monitor,
            _number(payload, "x"),
            _number(payload, "y"),
            _text(payload, "app"),
            _text(payload, "window"),
            _text(payload, "url"),
            _text(payload, "element_name"),
            _text(payload, "element_role"),
            _text(payload, "text"),  # kept: the compiler decides what to emit (principle 8)
        )
        if inside:
            self.inputs.append(event)

    def _absence(self, row_id: int, t: float, payload: Mapping[str, Any]) -> bool:
        """An explicit signal that nobody was there from t to payload.end (e.g. AFK);
        whether it reaches into the window."""
        end = payload.get("end")
        try:
            until = datetime.fromisoformat(end) if isinstance(end, str) else None
        except ValueError:
            until = None
        if until is None or until.utcoffset() is None:
            raise RecordInvalid("payload.end must be an ISO 8601 timestamp with an offset.")
        reason = payload.get("reason") or "afk"
        only = payload.get("monitor")
        if not isinstance(reason, str) or not (only is None or isinstance(only, str)):
            raise RecordInvalid("payload.reason and payload.monitor must be strings.")
        stop = until.timestamp()
        # An absence belongs to a window it overlaps, not only to the one it starts in.
        if (self.end is None or t < self.end) and (self.start is None or stop > self.start):
            self.absences.append(Absence(row_id, t, stop, reason, only))
            return True
        return False

    def finish(self, *, recorder: str = RECORDER, reader: str = "events") -> Capture:
        """The Capture of everything added so far.

        It leaves the converter as it was, so more records may be added and ``finish`` called
        again (the Django side keeps a day's converter and adds only new events); the result
        is the same as converting all the records at once.
        """
        trees = list(self._trees)
        self.orphan_trees = 0
        for snapshot_key, position, inside, tree in self._waiting:
            owner = self._kept.get(snapshot_key)
            if owner is not None:
                trees.append((owner, position, tree))
            elif snapshot_key not in self._snapshot_keys and inside:
                self.orphan_trees += 1
        trees.sort(key=lambda item: (item[0].t, item[0].id, item[1]))
        elements = [
            Element(owner.id, role, name, bounds)
            for owner, _position, tree in trees
            for role, name, bounds in tree
        ]
        disclosures: list[str] = []
        if self.emulated:
            # What the ActivityWatch reader told the importer, said again with the stored day.
            disclosures.append(activitywatch.EMULATION)
            if not self.emulated_away:
                disclosures.append(
                    "No ActivityWatch AFK signal reached this window; time away from the "
                    "computer is unknown, not inactivity."
                )
        if self.orphan_trees:
            disclosures.append(
                f"{plural(self.orphan_trees, 'element tree')} named a snapshot that is not in "
                "the input and " + ("was" if self.orphan_trees == 1 else "were") + " dropped."
            )
        if self.repeated:
            disclosures.append(
                f"{plural(self.repeated, 'record')} repeated the source_key of an earlier "
                "record and " + ("was" if self.repeated == 1 else "were") + " read once."
            )
        return Capture(
            snapshots=sorted(self.snapshots, key=lambda s: (s.t, s.id)),
            inputs=sorted(self.inputs, key=lambda e: (e.t, e.id)),
            elements=elements,
            absences=sorted(self.absences, key=lambda a: (a.start, a.id)),
            recorder=recorder,
            reader=reader,
            disclosures=disclosures,
            # Rows emulated from ActivityWatch and nothing else: no input events were recorded.
            inputs_recorded=bool(self.inputs) or self.emulated < len(self.snapshots),
        )


def capture_from_records(
    records: Iterable[Mapping[str, Any]],
    start: float | None = None,
    end: float | None = None,
    *,
    recorder: str = RECORDER,
    reader: str = "events",
) -> Capture:
    """The rows of ``records`` whose time falls in [start, end), sorted by (t, id).

    Every snapshot is kept, focused or not (monitors are separate streams, §4.2). Element
    trees are kept for the snapshots kept; a tree naming a snapshot absent from the input is
    dropped and counted. A malformed record raises :class:`SourceError` naming its 1-based
    position.
    """
    converter = RecordConverter(start, end)
    for position, record in enumerate(records, start=1):
        try:
            converter.add(record, position)
        except RecordInvalid as problem:
            raise SourceError(f"record {position}: {problem}") from None
    return converter.finish(recorder=recorder, reader=reader)


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def records_from_capture(capture: Capture, prefix: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Our event records for everything in a capture, as (location, record) pairs.

    The inverse of :func:`capture_from_records`. Source keys come from the capture's own ids
    (``<prefix>:s<id>``, ``:e<id>``, ``:i<id>``, ``:a<id>``), so sending a capture twice, or a
    capture and a later one that overlaps it, stores every row once. Used by the importer and
    by ``aframes-sync``; typed text is included when the capture holds it (the sender decides).
    """
    trees = capture.elements_for([s.id for s in capture.snapshots])
    for s in capture.snapshots:
        key = f"{prefix}:s{s.id}"
        yield (
            f"snapshot {s.id}",
            {
                "occurred_at": utc_iso(s.t),
                "kind": "snapshot",
                "source_key": key,
                "monitor": s.monitor,
                "payload": (
                    {"app": s.app, "window": s.window, "url": s.url}
                    if s.end is None
                    else {"app": s.app, "window": s.window, "url": s.url, "end": utc_iso(s.end)}
                ),
            },
        )
        tree = trees.get(s.id)
        if tree:
            yield (
                f"elements of {s.id}",
                {
                    "occurred_at": utc_iso(s.t),
                    "kind": "elements",
                    "source_key": f"{prefix}:e{s.id}",
                    "monitor": s.monitor,
                    "payload": {
                        "snapshot": key,
                        "elements": [
                            {
                                "role": e.role or "unknown",
                                "name": e.name,
                                "bounds": list(e.bounds) if e.bounds else None,
                            }
                            for e in tree
                        ],
                    },
                },
            )
    for e in capture.inputs:
        payload: dict[str, Any] = {
            "type": e.type,
            "x": _finite(e.x),
            "y": _finite(e.y),
            "app": e.app,
            "window": e.window,
            "url": e.url,
            "element_name": e.element_name,
            "element_role": e.element_role,
        }
        if e.text is not None:
            payload["text"] = e.text
        yield (
            f"input {e.id}",
            {
                "occurred_at": utc_iso(e.t),
                "kind": "input",
                "source_key": f"{prefix}:i{e.id}",
                "monitor": e.monitor,
                "payload": payload,
            },
        )
    for a in capture.absences:
        yield (
            f"absence {a.id}",
            {
                "occurred_at": utc_iso(a.start),
                "kind": "absence",
                "source_key": f"{prefix}:a{a.id}",
                "monitor": a.monitor or "",
                "payload": {"end": utc_iso(a.end), "reason": a.reason, "monitor": a.monitor},
            },
        )
