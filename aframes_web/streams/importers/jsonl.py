"""JSONL of our own event records: what ``GET /api/v1/entities/{key}/events`` returns as NDJSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

from aframes_web.streams.importers.base import Format, ReadLimits, SourceItem, numbered_lines
from compiler.sources.jsonl import open_maybe_gzip


class JsonlReader:
    def __init__(self, path: Path, tz: ZoneInfo | None = None) -> None:
        self.path = path
        self.bytes_read = 0

    def __iter__(self) -> Iterator[SourceItem]:
        name = self.path.name
        with open_maybe_gzip(self.path) as handle:
            raw = getattr(handle, "fileobj", None)  # gzip: progress is in compressed bytes
            limits = ReadLimits.for_file(self.path, gzipped=raw is not None)
            for number, line in numbered_lines(handle, name, limits):
                self.bytes_read = raw.tell() if raw is not None else handle.tell()
                if not line.strip():
                    continue
                location = f"{name}:{number}"
                try:
                    yield SourceItem(location, item=json.loads(line))
                except (ValueError, UnicodeDecodeError) as exc:
                    yield SourceItem(location, error=f"not valid JSON ({exc})")


FORMAT = Format(
    name="jsonl",
    factory=JsonlReader,
    scope=None,
    description="our own event records, one JSON object per line (what GET .../events exports)",
)
