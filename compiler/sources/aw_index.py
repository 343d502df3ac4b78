"""The command line's index of an ActivityWatch export: one day read without parsing them all.

An export holds every day since the watcher was installed, and the command line compiles one
day (or a range) of it per call. Parsing and checking the whole file at every call makes each
call cost what the export's history costs; the reference implementation reads one day of an
indexed SQLite. So the first call on an export (the command line's own reads only, never the
service's) parses and checks the whole file as any read does and then writes this index: where
each window and web event lies in the file (byte offsets), its start, end and row id as a read
of the whole export gives them, the AFK intervals, and what the read says about the export
(buckets seen and ignored, naive timestamps). A later call on the same file reads the index,
then parses only the events near its window.

What the index holds and what it does not:

- **No titles, apps or URLs.** Those are read from the export itself at every call; the index
  holds times, ids and offsets. Deleting the export leaves no copy of what was on screen.
- **The file it was made from**, by device, inode, size and modification and change times
  (``os.stat``), and the reader's code that made it (a fingerprint of its source files). Any
  write to the file changes its change time, so an index is read only for the very file and
  reader it was made by; otherwise the file is read whole again and the index made anew. A
  broken event anywhere in a file still fails its first read, and no index is written.
- **Plain UTF-8 files of the usual shape** (``{"buckets": {id: {..., "events": [...]}}}``)
  only. A gzipped export, another encoding or another shape is read whole at every call.

Where: ``$AFRAMES_CACHE_DIR/activitywatch`` when set, else ``$XDG_CACHE_HOME/aframes/
activitywatch`` (``~/.cache/aframes/activitywatch``); one file per export path. An index that
cannot be written (a read-only home) is no error: the call reads the file whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import re
import struct
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from json.scanner import make_scanner
from typing import Any

VERSION = 1  # the layout below; an index of another version is made anew
MAGIC = b"aframes activitywatch index\n"
CACHE_ENV = "AFRAMES_CACHE_DIR"

# (device, inode, size, modification ns, change ns): the file an index was made from.
Identity = tuple[int, int, int, int, int]

# Each table's columns, in the order they are stored: "d" float seconds, "q" whole numbers.
WINDOW_COLUMNS = (
    ("start", "d"),
    ("end", "d"),
    ("reach", "d"),
    ("id", "q"),
    ("lo", "q"),
    ("hi", "q"),
)
PAGE_COLUMNS = (*WINDOW_COLUMNS, ("family", "q"))
AWAY_COLUMNS = (("start", "d"), ("end", "d"), ("id", "q"))


def cache_dir() -> str:
    """Where the command line keeps its indexes (module docstring)."""
    base = os.environ.get(CACHE_ENV)
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "aframes")
    return os.path.join(base, "activitywatch")


def identity(name: str) -> Identity:
    st = os.stat(name)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


# The code that gives an index its ids and times: an index made by other code is made anew.
_READER_FILES = ("activitywatch.py", "aw_index.py", "_common.py")


def reader() -> str | None:
    """A fingerprint of the reader's code (:data:`_READER_FILES`), or None where its source
    cannot be read (then no index is written or read)."""
    digest = hashlib.sha256()
    try:
        for file in _READER_FILES:
            with open(os.path.join(os.path.dirname(__file__), file), "rb") as handle:
                digest.update(handle.read())
    except OSError:
        return None
    return digest.hexdigest()[:32]


def index_path(directory: str, name: str) -> str:
    """The index file of the export at ``name``: one per export path."""
    key = hashlib.sha256(os.path.realpath(name).encode("utf-8", "surrogatepass")).hexdigest()
    return os.path.join(directory, f"{key[:32]}.idx")


# ---------------------------------------------------------------------------------------------
# Parsing with the place of every event
# ---------------------------------------------------------------------------------------------

_SPACE = re.compile(r"[ \t\n\r]*")
# json.loads's own reader of one value at a place (typeshed types its argument as a scanner).
_SCAN: Callable[[str, int], tuple[Any, int]] = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


class _Unusual(Exception):
    """Text the walk does not read: it is parsed whole by ``json.loads`` instead, which gives
    the same value or words the error as every read does."""


# Per events array (by identity, the array held so the identity stays its own): the array and
# each event's [start, end) in the text.
Places = dict[int, tuple[list[Any], list[int], list[int]]]


def parse(text: str) -> tuple[Any, Places] | None:
    """``json.loads(text)`` and the place of each event of each bucket's ``events`` array, or
    None where the text is not JSON, or not of the usual shape, with every bucket an object
    whose events (if any) are an array (module docstring).

    Values are read by ``json.loads``'s own scanner, so what this gives equals what
    ``json.loads`` gives; only the objects on the way to the events are walked here.
    """
    places: Places = {}
    try:
        start = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
        data, end = _object(text, start, 0, places)
        if _SPACE.match(text, end).end() != len(text):  # type: ignore[union-attr]
            raise _Unusual
    except (_Unusual, StopIteration, ValueError, RecursionError):
        return None
    buckets = data.get("buckets")
    if not isinstance(buckets, dict) or not all(
        isinstance(bucket, dict)
        and (
            "events" not in bucket
            or places.get(id(bucket["events"]), (None,))[0] is bucket["events"]
        )
        for bucket in buckets.values()
    ):
        return None  # not {"buckets": {id: {..., "events": [...]}}}: every event must be placed
    return data, places


def _object(text: str, i: int, depth: int, places: Places) -> tuple[dict[str, Any], int]:
    # depth 0: the export, 1: its buckets, 2: one bucket
    if text[i : i + 1] != "{":
        raise _Unusual
    out: dict[str, Any] = {}
    i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]
    if text[i : i + 1] == "}":
        return out, i + 1
    while True:
        if text[i : i + 1] != '"':
            raise _Unusual
        key, i = _SCAN(text, i)
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if text[i : i + 1] != ":":
            raise _Unusual
        i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]
        opens = text[i : i + 1]
        value: Any
        if depth == 0 and key == "buckets" and opens == "{":
            value, i = _object(text, i, 1, places)
        elif depth == 1 and opens == "{":
            value, i = _object(text, i, 2, places)
        elif depth == 2 and key == "events" and opens == "[":
            value, i = _events(text, i, places)
        else:
            value, i = _SCAN(text, i)
        out[key] = value  # a repeated key: the last wins, as json.loads has it
        i, done = _after(text, i, "}")
        if done:
            return out, i


def _events(text: str, i: int, places: Places) -> tuple[list[Any], int]:
    out: list[Any] = []
    starts: list[int] = []
    ends: list[int] = []
    places[id(out)] = (out, starts, ends)
    i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]
    if text[i : i + 1] == "]":
        return out, i + 1
    while True:
        starts.append(i)
        value, i = _SCAN(text, i)
        ends.append(i)
        out.append(value)
        i, done = _after(text, i, "]")
        if done:
            return out, i


def _after(text: str, i: int, closer: str) -> tuple[int, bool]:
    """Past a member ending at ``i``: after its comma and the space that follows (False), or
    after ``closer``, the end of its object or array (True)."""
    i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
    follows = text[i : i + 1]
    if follows == ",":
        return _SPACE.match(text, i + 1).end(), False  # type: ignore[union-attr]
    if follows == closer:
        return i + 1, True
    raise _Unusual


def byte_offsets(text: str, offsets: Sequence[int]) -> list[int]:
    """Each of ``offsets`` (positions in ``text``, ascending) as a position in its UTF-8
    bytes."""
    if text.isascii():
        return list(offsets)
    out = []
    at = done = 0
    for offset in offsets:
        done += len(text[at:offset].encode("utf-8"))
        at = offset
        out.append(done)
    return out


# ---------------------------------------------------------------------------------------------
# The index on disk
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Index:
    """An export's index: its tables (columns by name) and what a read says of the export."""

    windows: dict[str, array[Any]]  # window events, by start; "reach": the latest end so far
    pages: dict[str, array[Any]]  # web events, in the order a read looks them up
    away: dict[str, array[Any]]  # AFK intervals whose status is afk
    families: list[str | None]  # a web event's browser family, by its "family" number
    seen: dict[str, list[str]]  # bucket ids by kind
    ignored: list[str]  # buckets not compiled
    naive: int  # timestamps without a UTC offset


def table(
    columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[float]]
) -> dict[str, array[Any]]:
    """Rows as typed columns, ``reach`` (when a column) the running latest ``end``."""
    values = list(zip(*rows, strict=True)) if rows else [()] * len(columns)
    out: dict[str, array[Any]] = {}
    for (name, code), column in zip(columns, values, strict=True):
        if name == "reach":
            column = tuple(accumulate(values[1], max))  # the ends, running
        out[name] = array(code, column)
    return out


def write(directory: str, name: str, made_from: Identity, index: Index) -> bool:
    """Write ``index`` of the export at ``name`` (``made_from``: the file it was read from)
    atomically; False where it cannot be written (nothing is left behind)."""
    code = reader()
    if code is None:
        return False
    header = {
        "version": VERSION,
        "reader": code,
        "identity": list(made_from),
        "byteorder": sys.byteorder,
        "families": index.families,
        "seen": index.seen,
        "ignored": index.ignored,
        "naive": index.naive,
        "rows": [len(index.windows["id"]), len(index.pages["id"]), len(index.away["id"])],
    }
    head = json.dumps(header).encode("utf-8")
    parts = [MAGIC, struct.pack("<Q", len(head)), head]
    for tables, columns in ((index.windows, WINDOW_COLUMNS), (index.pages, PAGE_COLUMNS),
                            (index.away, AWAY_COLUMNS)):  # fmt: skip
        parts += [tables[column].tobytes() for column, _code in columns]
    import tempfile  # only where an index is written: a read that uses one does without it

    try:
        os.makedirs(directory, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".writing-", suffix=".idx")
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(b"".join(parts))
        os.replace(temporary, index_path(directory, name))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    return True


def read(directory: str, name: str) -> Index | None:
    """The index of the export at ``name``, or None where there is none for this very file (or
    it cannot be read: it is then made anew)."""
    try:
        made_from = identity(name)
        with open(index_path(directory, name), "rb") as handle:
            blob = handle.read()
    except OSError:
        return None
    try:
        if not blob.startswith(MAGIC):
            return None
        at = len(MAGIC)
        (size,) = struct.unpack_from("<Q", blob, at)
        at += 8
        header = json.loads(blob[at : at + size])
        at += size
        if (
            header.get("version") != VERSION
            or header.get("reader") != reader()
            or header.get("byteorder") != sys.byteorder
            or tuple(header.get("identity", ())) != made_from
        ):
            return None
        counts = header["rows"]
        tables: list[dict[str, array[Any]]] = []
        for count, columns in zip(
            counts, (WINDOW_COLUMNS, PAGE_COLUMNS, AWAY_COLUMNS), strict=True
        ):
            found: dict[str, array[Any]] = {}
            for column, code in columns:
                values = array(code)
                width = values.itemsize * count
                values.frombytes(blob[at : at + width])
                if len(values) != count:
                    return None  # cut short
                found[column] = values
                at += width
            tables.append(found)
        if at != len(blob):
            return None
        return Index(
            windows=tables[0],
            pages=tables[1],
            away=tables[2],
            families=list(header["families"]),
            seen={kind: list(ids) for kind, ids in header["seen"].items()},
            ignored=list(header["ignored"]),
            naive=int(header["naive"]),
        )
    except (ValueError, KeyError, TypeError, struct.error):
        return None


def near(columns: dict[str, array[Any]], low: float, high: float) -> list[int]:
    """The rows (by position) of events that start before ``high`` and end at or after
    ``low``: a read's events near its window (``activitywatch._Reader.keyed``)."""
    first = bisect_left(columns["reach"], low)
    last = bisect_left(columns["start"], high)
    ends = columns["end"]
    return [k for k in range(first, last) if ends[k] >= low]


def events_at(
    export: str, spans: Sequence[tuple[int, int]], blob: bytes | None = None
) -> list[Any]:
    """The events stored at ``spans`` (byte [start, end) in the export, or in ``blob``, its
    bytes) parsed, in that order; an event a span of (-1, -1) names has no data and is given as
    an empty object."""
    wanted = [(lo, hi) for lo, hi in spans if lo >= 0]
    parsed: list[Any] = []
    if wanted:
        if blob is not None:
            joined = b",".join(blob[lo:hi] for lo, hi in wanted)
        else:
            # Mapped, not read: only the pages of the events asked for are touched.
            with (
                open(export, "rb") as handle,
                mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped,
            ):
                joined = b",".join(mapped[lo:hi] for lo, hi in wanted)
        parsed = json.loads(b"[" + joined + b"]")
    found = iter(parsed)
    return [next(found) if lo >= 0 else {} for lo, _hi in spans]
