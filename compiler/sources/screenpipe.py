"""A screenpipe-style capture SQLite (frames, ui_events, elements), opened read-only.

The recorder owns the database; this reader never writes to it: the connection is opened with
SQLite's ``mode=ro`` URI flag and ``PRAGMA query_only``. Older databases may lack
``ui_events``, ``elements`` or some columns; what is missing is read as empty and said in the
capture's disclosures.

Ids: a snapshot's id is its ``frames.id``. An input event's id is ``INPUT_ID_BASE`` plus its
``ui_events.id`` (its rowid where there is no id column), so evidence naming either kind of
row is unambiguous: an id at or above ``INPUT_ID_BASE`` is an input event.
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from itertools import repeat
from operator import add
from pathlib import Path

from compiler.capture import (
    BY_TIME,
    INPUT_TYPES,
    ROW_ID,
    Capture,
    Element,
    InputEvent,
    Snapshot,
    in_time_order,
)
from compiler.sources._common import PathLike, SourceError, plural, require_file

RECORDER = "screenpipe"
# Input ids live above every frame id: a capture would need 10^12 frames (one a second for
# 30,000 years) before the two spaces met.
INPUT_ID_BASE = 10**12
_INPUT_TYPES = frozenset(INPUT_TYPES)
# SQLite stores what the recorder wrote; the window is selected on the first 19 characters
# (YYYY-MM-DD?HH:MM:SS), with either separator, then checked exactly after parsing.
_SEPARATORS = ("T", " ")
_LATEST = 253_402_300_799  # 9999-12-31T23:59:59Z, the last second strftime can write


def connect(path: PathLike) -> sqlite3.Connection:
    """A read-only connection to the capture database (raises SourceError if it is missing)."""
    name = require_file(path)
    uri = Path(name).resolve().as_uri() + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
        connection.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        raise SourceError(f"{name}: cannot open the database read-only ({exc}).") from None
    return connection


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    rows = connection.execute(f'PRAGMA table_info("{table}")').fetchall()
    return {str(row[1]).lower() for row in rows}


def _pick(columns: set[str], name: str, alias: str = "") -> str:
    qualified = f'{alias}."{name}"' if alias else f'"{name}"'
    return qualified if name in columns else "NULL"


def _second(epoch: float, separator: str, *, after: bool = False) -> str:
    """The UTC second holding ``epoch`` (or the one after it), as the recorder spells it."""
    second = math.floor(min(max(epoch, 0.0), float(_LATEST - 1))) + after
    return datetime.fromtimestamp(second, UTC).strftime(f"%Y-%m-%d{separator}%H:%M:%S")


def _window_sql(column: str, start: float | None, end: float | None) -> tuple[str, list[str]]:
    """A WHERE clause that keeps every row of [start, end) and few others.

    A stored string whose first 19 characters are >= the start second's prefix, and < the
    prefix of the second after the end second, covers every instant in the window whatever
    follows (fraction, Z, +00:00, nothing). Both separators are tried, so a database that
    writes "2026-03-02 08:00:00" is read as well as one that writes "2026-03-02T08:00:00".
    """
    if start is None and end is None:
        return "1", []
    branches: list[str] = []
    params: list[str] = []
    for separator in _SEPARATORS:
        parts: list[str] = []
        if start is not None:
            parts.append(f"{column} >= ?")
            params.append(_second(start, separator))
        if end is not None:
            parts.append(f"{column} < ?")
            params.append(_second(end, separator, after=True))
        branches.append("(" + " AND ".join(parts) + ")")
    return "(" + " OR ".join(branches) + ")", params


class _Tally:
    """Counts the stored timestamps of the window that needed a decision."""

    def __init__(self, start: float | None, end: float | None) -> None:
        self.low = -math.inf if start is None else start
        self.high = math.inf if end is None else end
        self.naive = 0
        self.offset = 0
        self.unreadable = 0

    def other(self, moment: datetime) -> float | None:
        """Epoch seconds of a timestamp not written in UTC, if in the window (rare path)."""
        if moment.tzinfo is None:
            t = moment.replace(tzinfo=UTC).timestamp()
            if self.low <= t < self.high:
                self.naive += 1
                return t
            return None
        t = moment.timestamp()
        if self.low <= t < self.high:
            if moment.utcoffset():
                self.offset += 1
            return t
        return None


class CaptureDatabase:
    """A capture database kept open for several reads: one read-only connection and its schema.

    Walking a capture window by window (the importer does) or compiling the same one again
    reuses the connection instead of opening the file for every read, and reads the
    tables' columns again only when ``PRAGMA schema_version`` says the recorder changed them.
    The connection runs only SELECTs, each outside any transaction, so every read sees what
    the recorder has committed by then. Not for sharing between threads (sqlite3 refuses).
    """

    def __init__(self, path: PathLike) -> None:
        self.path = os.fspath(path)
        self._connection: sqlite3.Connection | None = connect(path)
        self._schema = -1
        self._tables: dict[str, set[str]] = {}

    def __enter__(self) -> CaptureDatabase:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection; element loaders of earlier reads then open their own."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            raise SourceError(f"{self.path}: the capture database was closed.")
        return self._connection

    def columns(self, *tables: str) -> list[set[str]]:
        """Each table's column names, lowercase (empty for a missing table).

        One ``PRAGMA schema_version`` a call says whether the cached names still hold.
        """
        connection = self._open()
        (version,) = connection.execute("PRAGMA schema_version").fetchone()
        if version != self._schema:
            self._schema, self._tables = version, {}
        for table in tables:
            if table not in self._tables:
                self._tables[table] = _columns(connection, table)
        return [self._tables[table] for table in tables]

    def time_span(self) -> tuple[float, float] | None:
        """The earliest and latest row times (frames and input events), None for an empty one.

        Importers and the sync agent walk a database by windows between these bounds.
        """
        connection = self._open()
        try:
            lows: list[float] = []
            highs: list[float] = []
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()  # is it SQLite?
            for table in ("frames", "ui_events"):
                try:
                    # Text sorts as time only among one spelling: "2026-03-02 09:00" sorts
                    # before "2026-03-02T08:00", and "11:00+01:00" after "10:30Z". So the
                    # extremes are taken per separator and offset suffix, then compared as time.
                    bounds = connection.execute(
                        f'SELECT min("timestamp"), max("timestamp") FROM {table} '
                        'GROUP BY substr("timestamp", 11, 1), CASE '
                        """WHEN "timestamp" LIKE '%Z' THEN 'Z' """
                        """WHEN substr("timestamp", -6, 1) IN ('+', '-') """
                        """THEN substr("timestamp", -6) ELSE '' END"""
                    ).fetchall()
                except sqlite3.OperationalError:  # a missing table; read() discloses it
                    continue
                for low, high in bounds:
                    for value, into in ((low, lows), (high, highs)):
                        if isinstance(value, str):
                            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
                            if moment.tzinfo is None:
                                moment = moment.replace(tzinfo=UTC)
                            into.append(moment.timestamp())
        except (sqlite3.Error, ValueError) as err:
            raise SourceError(f"{self.path}: not a readable capture database ({err}).") from None
        return (min(lows), max(highs)) if lows and highs else None

    def read(
        self, start: float | None = None, end: float | None = None, *, input_context: bool = True
    ) -> Capture:
        """Snapshots, input events and element trees of [start, end), sorted by (t, id).

        Every monitor's frames are kept, focused or not: monitors are separate streams
        (§4.2), and what is on screen is what the capture saw. Frames without an app name are
        left out and counted in the disclosures. Element trees are loaded on demand, for the
        snapshots the compiler needs to resolve clicks against.

        ``input_context=False`` leaves out each input event's own app, window title and URL
        (None on every input): the compiler never reads them, since it places an input by
        time and monitor (§4.3), and they are a quarter of what a day's ui_events cost to
        read. The document is the same either way; importers keep the default.
        """
        try:
            return self._read(start, end, input_context)
        except sqlite3.DatabaseError as exc:
            raise SourceError(f"{self.path}: not a readable capture database ({exc}).") from None

    def _read(self, start: float | None, end: float | None, input_context: bool) -> Capture:
        connection = self._open()
        disclosures: list[str] = []
        tally = _Tally(start, end)
        frame_columns, input_columns, element_columns = self.columns(
            "frames", "ui_events", "elements"
        )
        if not {"id", "timestamp", "app_name"} <= frame_columns:
            raise SourceError(
                f"{self.path}: not a screenpipe-style capture: it needs a frames table with id, "
                "timestamp and app_name columns."
            )
        snapshots, refs = _snapshots(connection, start, end, tally, frame_columns, disclosures)
        if snapshots and max(map(ROW_ID, snapshots)) >= INPUT_ID_BASE:
            raise SourceError(
                f"{self.path}: a frame id reaches {INPUT_ID_BASE:,}, where input ids begin; "
                "this reader cannot keep the two apart."
            )
        inputs = _inputs(
            connection,
            start,
            end,
            tally,
            frame_columns,
            input_columns,
            disclosures,
            context=input_context,
        )
        loader = self._element_loader(element_columns, snapshots, refs, disclosures)
        if tally.naive:
            disclosures.append(
                f"{plural(tally.naive, 'timestamp')} had no UTC offset and "
                f"{'was' if tally.naive == 1 else 'were'} read as UTC."
            )
        if tally.offset:
            disclosures.append(
                f"{plural(tally.offset, 'timestamp')} carried a non-UTC offset; the times were "
                "converted, but rows were selected for the window by their written time."
            )
        if tally.unreadable:
            disclosures.append(
                f"{plural(tally.unreadable, 'row')} with an unreadable timestamp "
                f"{'was' if tally.unreadable == 1 else 'were'} left out."
            )
        return Capture(
            snapshots=snapshots,
            inputs=inputs,
            recorder=RECORDER,
            reader="screenpipe",
            disclosures=disclosures,
            element_loader=loader,
        )

    def _element_loader(
        self,
        columns: set[str],
        snapshots: list[Snapshot],
        refs: dict[int, int],
        disclosures: list[str],
    ) -> Callable[[Collection[int]], list[Element]] | None:
        """A loader of element trees by snapshot id, or None when the database has none.

        The loader reads through this database while it is open, else through a connection
        of its own: a capture is often compiled after its reader was closed.
        """
        if not columns:
            disclosures.append(
                "The database has no elements table (an older schema); no element trees were read."
            )
            return None
        if "frame_id" not in columns:
            disclosures.append(
                "The elements table has no frame_id column; no element trees were read."
            )
            return None
        by_id: dict[int, Snapshot] = {}  # built on the first load, if any

        def load(snapshot_ids: Collection[int]) -> list[Element]:
            if not by_id:
                by_id.update(zip(map(ROW_ID, snapshots), snapshots, strict=True))
            wanted = [by_id[i] for i in sorted(snapshot_ids) if i in by_id]
            if not wanted:
                return []
            found: list[str] = []
            if self._connection is not None:
                (now,) = self.columns("elements")
                trees = _elements(self._connection, now, wanted, refs, found)
            else:
                again = connect(self.path)
                try:
                    trees = _elements(again, _columns(again, "elements"), wanted, refs, found)
                finally:
                    again.close()
            # A capture may be compiled more than once; say each thing about its trees once.
            disclosures.extend(sentence for sentence in found if sentence not in disclosures)
            return trees

        return load


def time_span(path: PathLike) -> tuple[float, float] | None:
    """:meth:`CaptureDatabase.time_span` of the database at ``path``, opened for this call."""
    with CaptureDatabase(path) as database:
        return database.time_span()


def read(
    path: PathLike,
    start: float | None = None,
    end: float | None = None,
    *,
    input_context: bool = True,
) -> Capture:
    """:meth:`CaptureDatabase.read` of the database at ``path``, opened for this one read."""
    with CaptureDatabase(path) as database:
        return database.read(start, end, input_context=input_context)


def _snapshots(
    connection: sqlite3.Connection,
    start: float | None,
    end: float | None,
    tally: _Tally,
    columns: set[str],
    disclosures: list[str],
) -> tuple[list[Snapshot], dict[int, int]]:
    """Focused frames of the window, and which frames show another frame's element tree."""
    missing = [c for c in ("window_name", "browser_url") if c not in columns]
    if missing:
        disclosures.append(
            f"The frames table has no {' or '.join(missing)} column (an older schema); "
            "those fields are empty on every snapshot."
        )
    if "device_name" not in columns:
        disclosures.append(
            "The frames table has no device_name column (an older schema); every snapshot "
            "is on monitor 0."
        )
    where, params = _window_sql('"timestamp"', start, end)
    rows = connection.execute(
        f'SELECT CAST("id" AS INTEGER), "timestamp", "app_name", '
        f"{_pick(columns, 'window_name')}, {_pick(columns, 'browser_url')}, "
        f"{_pick(columns, 'device_name')} FROM frames WHERE {where}",
        params,
    ).fetchall()
    snapshots: list[Snapshot] = []
    append = snapshots.append
    refs: dict[int, int] = {}  # snapshot id -> the frame whose element tree it shows
    nameless = 0
    parse = datetime.fromisoformat
    low, high = tally.low, tally.high
    # The hot loop of a read: the UTC case is inlined, every other case goes to the tally.
    for frame_id, stamp, app, window, url, device in rows:
        try:
            moment = parse(stamp)
        except (TypeError, ValueError):
            tally.unreadable += 1
            continue
        if moment.tzinfo is UTC:
            t = moment.timestamp()
            if not low <= t < high:
                continue
        else:
            other = tally.other(moment)
            if other is None:
                continue
            t = other
        if not app:
            nameless += 1
            continue
        append(Snapshot(frame_id, t, device or "0", app, window, url))
    if "elements_ref_frame_id" in columns:
        # Few frames show another frame's tree, so the references are read on their own: in
        # the main query the column would cost a fetched value (~1 us) on every row.
        kept = {s.id for s in snapshots}
        for frame_id, ref in connection.execute(
            f'SELECT CAST("id" AS INTEGER), "elements_ref_frame_id" FROM frames '
            f'WHERE {where} AND "elements_ref_frame_id" IS NOT NULL',
            params,
        ):
            if ref != frame_id and frame_id in kept:
                refs[frame_id] = ref
    if not in_time_order(snapshots):
        snapshots.sort(key=BY_TIME)
    if nameless:
        disclosures.append(
            f"{plural(nameless, 'frame')} without an app name "
            f"{'was' if nameless == 1 else 'were'} left out."
        )
    return snapshots, refs


# The optional ui_events columns, in the order the disclosure of missing ones names them.
_INPUT_FIELDS = (
    "x",
    "y",
    "text_content",
    "app_name",
    "window_title",
    "browser_url",
    "element_name",
    "element_role",
)
# Each input event's own app, window title and URL: read last, and only for input_context.
_CONTEXT_FIELDS = ("app_name", "window_title", "browser_url")
_NO_CONTEXT = (None, None, None)


def _inputs(
    connection: sqlite3.Connection,
    start: float | None,
    end: float | None,
    tally: _Tally,
    frame_columns: set[str],
    columns: set[str],
    disclosures: list[str],
    *,
    context: bool,
) -> list[InputEvent]:
    if not columns:
        disclosures.append(
            "The database has no ui_events table (an older schema); no input events were read."
        )
        return []
    if not {"timestamp", "event_type"} <= columns:
        disclosures.append(
            "The ui_events table has no timestamp or event_type column; no input events were read."
        )
        return []
    missing = [c for c in _INPUT_FIELDS if c not in columns]
    if missing:
        disclosures.append(
            f"The ui_events table has no {', '.join(missing)} column"
            f"{'s' if len(missing) > 1 else ''} (an older schema); those fields are empty on "
            "every input event."
        )
    if "id" in columns:
        row_id = 'CAST(u."id" AS INTEGER)'
    else:
        row_id = "u.rowid"
        disclosures.append(
            "The ui_events table has no id column; input ids come from SQLite rowids, which "
            "a VACUUM may renumber."
        )
    device, join = "NULL", ""
    if "device_name" in frame_columns:
        if "frame_id" in columns:
            device, join = 'f."device_name"', 'LEFT JOIN frames f ON f."id" = u."frame_id"'
        else:
            disclosures.append(
                "The ui_events table has no frame_id column (an older schema); every input "
                "event is on monitor 0."
            )
    fields = [
        _pick(columns, c, "u") for c in ("x", "y", "text_content", "element_name", "element_role")
    ]
    for number in (0, 1):  # x, y: the recorder may store integers
        if fields[number] != "NULL":
            fields[number] = f"CAST({fields[number]} AS REAL)"
    fields.append(device)
    if context:
        fields.extend(_pick(columns, c, "u") for c in _CONTEXT_FIELDS)
    where, params = _window_sql('u."timestamp"', start, end)
    found = connection.execute(
        f'SELECT {row_id}, u."timestamp", u."event_type", {", ".join(fields)} '
        f"FROM ui_events u {join} WHERE {where}",
        params,
    ).fetchall()
    # Without context the three columns are added here: a NULL column costs SQLite and
    # sqlite3 more per row than joining a tuple of three Nones.
    rows = found if context else map(add, found, repeat(_NO_CONTEXT))
    inputs: list[InputEvent] = []
    append = inputs.append
    others: dict[str, int] = {}
    parse = datetime.fromisoformat
    low, high = tally.low, tally.high
    for event_id, stamp, kind, x, y, text, name, role, monitor, app, window, url in rows:
        try:
            moment = parse(stamp)
        except (TypeError, ValueError):
            tally.unreadable += 1
            continue
        if moment.tzinfo is UTC:
            t = moment.timestamp()
            if not low <= t < high:
                continue
        else:
            other = tally.other(moment)
            if other is None:
                continue
            t = other
        if kind not in _INPUT_TYPES:
            kind = str(kind).lower()
            if kind not in _INPUT_TYPES:
                others[kind] = others.get(kind, 0) + 1
                continue
        append(
            InputEvent(
                INPUT_ID_BASE + event_id,
                t,
                kind,
                monitor or "0",
                x,
                y,
                app,
                window,
                url,
                name,
                role,
                text,  # kept: the compiler decides what to emit (principle 8)
            )
        )
    if not in_time_order(inputs):
        inputs.sort(key=BY_TIME)
    if others:
        total = sum(others.values())
        disclosures.append(
            f"{plural(total, 'ui_events row')} of other types ({', '.join(sorted(others))}) "
            f"{'was' if total == 1 else 'were'} left out."
        )
    return inputs


def _elements(
    connection: sqlite3.Connection,
    columns: set[str],
    snapshots: list[Snapshot],
    refs: dict[int, int],
    disclosures: list[str],
) -> list[Element]:
    """Element trees of ``snapshots`` (the loader passes them in id order, the order the rows
    are fetched in), each tree in stored order.

    A frame whose ``elements_ref_frame_id`` names another frame shows that frame's tree (the
    recorder stores an unchanged tree once); the tree is repeated under the snapshot's id.
    """
    if "frame_id" not in columns:  # the table went since the capture was read
        disclosures.append(
            "The elements table is gone or has no frame_id column now; no element trees were read."
        )
        return []
    if not snapshots:
        return []
    # Recorders name the bounds left_bound.. (screenpipe) or left.. (older exports).
    for names in (("left_bound", "top_bound", "width_bound", "height_bound"), _PLAIN_BOUNDS):
        if set(names) <= columns:
            bounds = ", ".join(f'CAST("{n}" AS REAL)' for n in names)
            break
    else:
        bounds = "NULL, NULL, NULL, NULL"
        disclosures.append(
            "The elements table has no bounds columns; elements carry no bounds, so clicks "
            "cannot be matched to them."
        )
    shown = {s.id: refs.get(s.id, s.id) for s in snapshots}
    wanted = set(shown.values())
    source = "\"source\" = 'ocr'" if "source" in columns else "0"
    order = '"id"' if "id" in columns else "rowid"
    # Frame ids grow with time, so one range scan over the window's frames finds the trees;
    # rows of frames not asked for fall in the range too and are dropped here.
    select = (
        f'SELECT CAST("frame_id" AS INTEGER), {source}, {_pick(columns, "role")}, '
        f"{_pick(columns, 'text')}, {bounds} FROM elements "
    )
    if len(wanted) <= _IN_LIST_MAX:
        # The usual case: a few dozen trees of clicked snapshots, fetched by index.
        marks = ", ".join("?" * len(wanted))
        rows = connection.execute(
            f'{select} WHERE "frame_id" IN ({marks}) ORDER BY "frame_id", {order}',
            sorted(wanted),
        ).fetchall()
    else:
        rows = connection.execute(
            f'{select} WHERE "frame_id" BETWEEN ? AND ? ORDER BY "frame_id", {order}',
            (min(wanted), max(wanted)),
        ).fetchall()
    elements: list[Element] = []
    append = elements.append
    ocr = 0
    for frame_id, is_ocr, role, text, left, top, width, height in rows:
        if frame_id not in wanted:
            continue
        ocr += is_ocr or 0
        box = (
            None
            if left is None or top is None or width is None or height is None
            else (left, top, width, height)
        )
        append(Element(frame_id, role or "", text, box))
    if refs:
        trees: dict[int, list[Element]] = {}
        for element in elements:
            trees.setdefault(element.snapshot_id, []).append(element)
        elements = [
            e if e.snapshot_id == s.id else Element(s.id, e.role, e.name, e.bounds)
            for s in snapshots
            for e in trees.get(shown[s.id], ())
        ]
    if ocr:
        disclosures.append(
            f"{plural(ocr, 'element')} came from OCR rather than the accessibility tree; "
            "element records do not mark which."
        )
    return elements


_PLAIN_BOUNDS = ("left", "top", "width", "height")
_IN_LIST_MAX = 500  # SQLite allows 32,766 parameters; past a few hundred a range scan is as fast
