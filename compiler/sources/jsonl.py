"""A JSONL file (plain or gzip) of our own event records, read as a stream into a Capture.

Each non-blank line is one record as ``GET /api/v1/entities/{key}/events`` returns it; blank
lines are skipped and do not count as records. Ids follow :mod:`compiler.sources.events`: a
record's ``id``, else its 1-based position among the file's records.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib

from compiler.capture import Capture
from compiler.sources._common import PathLike, SourceError, require_file
from compiler.sources.events import RECORDER, RecordConverter, RecordInvalid

_GZIP_MAGIC = b"\x1f\x8b"


def open_maybe_gzip(name: str | PathLike) -> gzip.GzipFile | io.BufferedReader:
    """A binary reader of the file, decompressing when it starts with the gzip magic bytes."""
    with open(name, "rb") as probe:
        gzipped = probe.read(2) == _GZIP_MAGIC
    if gzipped:
        return gzip.open(name, "rb")
    return open(name, "rb")  # noqa: SIM115 - the caller closes it


def read(path: PathLike, start: float | None = None, end: float | None = None) -> Capture:
    """The records of ``path`` whose time falls in [start, end), sorted by (t, id).

    A line that is not JSON, or not a valid record, raises :class:`SourceError` with
    ``file:line`` and the reason.
    """
    name = require_file(path)
    converter = RecordConverter(start, end)
    position = 0
    number = 0
    try:
        with open_maybe_gzip(name) as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                position += 1
                try:
                    record = json.loads(line)
                except (ValueError, UnicodeDecodeError) as exc:
                    raise SourceError(f"{name}:{number}: not valid JSON ({exc}).") from None
                try:
                    converter.add(record, position)
                except RecordInvalid as problem:
                    raise SourceError(f"{name}:{number}: {problem}") from None
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise SourceError(f"{name}:{number + 1}: cannot read the file ({exc}).") from None
    return converter.finish(recorder=RECORDER, reader="jsonl")
