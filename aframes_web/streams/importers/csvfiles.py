"""What the CSV importers share: rows with line numbers and exact byte progress, number cells.

Used by the Fitbit (Fitabase) and HeartSteps importers.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path

from aframes_web.streams.importers.base import ReadLimits, bounded_lines

# Fitabase writes its float columns from single-precision values (8.5 is 8.5, but 1.88 comes
# out as 1.87999999523163); four decimals keep every digit the device measured.
FLOAT_DECIMALS = 4


class RowError(ValueError):
    """A row this reader cannot turn into an event; the message says which column and why."""


def number(text: str, column: str, *, required: bool = True) -> int | float | None:
    """A CSV cell as an int when it is whole, else a float rounded to FLOAT_DECIMALS."""
    cell = text.strip()
    if not cell or cell.upper() in ("NA", "NAN"):
        if required:
            raise RowError(f"{column} is empty")
        return None
    try:
        return int(cell)
    except ValueError:
        pass
    try:
        value = float(cell)
    except ValueError:
        raise RowError(f"{column} is {cell!r}, not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise RowError(f"{column} is {cell!r}, not a finite number")
    return round(value, FLOAT_DECIMALS)


class CsvFile:
    """Rows of one CSV file with their line numbers, read as bytes so progress is exact."""

    def __init__(self, path: Path, on_bytes: Callable[[int], None]) -> None:
        self.path = path
        self.on_bytes = on_bytes
        self._undecodable: set[int] = set()

    def _lines(self) -> Iterator[str]:
        limits = ReadLimits.for_file(self.path, gzipped=False)
        with self.path.open("rb") as handle:
            lines = bounded_lines(handle, self.path.name, limits)
            for number_, raw in enumerate(lines, start=1):
                self.on_bytes(len(raw))
                try:
                    yield raw.decode("utf-8-sig" if number_ == 1 else "utf-8")
                except UnicodeDecodeError:
                    self._undecodable.add(number_)
                    yield raw.decode("utf-8", errors="replace")

    def rows(self) -> Iterator[tuple[int, list[str] | None, str | None]]:
        """``(line, cells, None)`` per non-blank row, or ``(line, None, why)`` for a bad one."""
        reader = csv.reader(self._lines())
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield reader.line_num, None, f"not readable as CSV ({exc})"
                continue
            if not cells or not any(cell.strip() for cell in cells):
                continue
            if reader.line_num in self._undecodable:
                yield reader.line_num, None, "not valid UTF-8"
                continue
            yield reader.line_num, cells, None
