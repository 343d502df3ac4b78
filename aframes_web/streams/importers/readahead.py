"""Lines of a plain or gzip file, read and inflated ahead by a background thread.

Inflating is about a fifth of the work of reading a GH Archive event. zlib releases the GIL
while it inflates, so a thread that inflates megabytes at a call runs on another core while
the caller decodes the lines before them. (``gzip.GzipFile`` inflates 8 KiB of input at a
time between Python steps, so a thread over it spends its time waiting for the GIL.)
"""

from __future__ import annotations

import queue
import threading
import zlib
from collections.abc import Iterator
from types import TracebackType
from typing import IO

from aframes_web.streams.importers.base import ReadLimits

BLOCK = 1 << 20  # compressed (or plain) bytes read at a time
OUT_MAX = 8 << 20  # most inflated bytes per block handed over (a highly compressed file)
AHEAD = 3  # blocks ready but not yet split into lines: memory stays within AHEAD x OUT_MAX
_TRUNCATED = "Compressed file ended before the end-of-stream marker was reached"


class ReadAhead:
    """``with ReadAhead(raw, gzipped=...) as lines:`` the lines of ``raw`` without their ``\\n``.

    Lines split as ``for line in handle`` splits them. An error reading the file (a truncated
    or corrupt gzip file) is raised where the lines end, after every complete line before it;
    the incomplete line at the break is not given, as with ``GzipFile``. ``position`` is how
    far into ``raw`` the lines handed over so far reach, for progress. Leaving the block stops
    the thread. ``limits`` bound a line and what the file unpacks to (:class:`ReadLimits`);
    past either, :class:`~aframes_web.streams.importers.FileTooStrange` is raised there.
    """

    def __init__(
        self,
        raw: IO[bytes],
        *,
        gzipped: bool,
        limits: ReadLimits,
        name: str = "file",
        block: int = BLOCK,
    ) -> None:
        self.raw, self.gzipped, self.block = raw, gzipped, block
        self.limits, self.name = limits, name
        self.position = 0
        self._blocks: queue.Queue[tuple[bytes, int] | BaseException] = queue.Queue(AHEAD)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._fill, name="aframes-read-ahead", daemon=True)

    def __enter__(self) -> Iterator[bytes]:
        self._thread.start()
        return self._lines()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    # the thread

    def _put(self, item: tuple[bytes, int] | BaseException) -> bool:
        while not self._stop.is_set():
            try:
                self._blocks.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _fill(self) -> None:
        try:
            for block in self._inflated() if self.gzipped else self._plain():
                if not self._put(block):
                    return
            self._put((b"", -1))
        except Exception as exc:  # raised in the reading thread, after the lines before it
            self._put(exc)

    def _plain(self) -> Iterator[tuple[bytes, int]]:
        read = 0
        while data := self.raw.read(self.block):
            read += len(data)
            yield data, read

    def _inflated(self) -> Iterator[tuple[bytes, int]]:
        """Inflate every gzip member in turn, as GzipFile does (zero padding between them too)."""
        inflater = None
        read = unpacked = 0
        most = self.limits.unpacked
        while data := self.raw.read(self.block):
            read += len(data)
            while data:
                if inflater is None:
                    data = data.lstrip(b"\x00")
                    if not data:
                        break
                    inflater = zlib.decompressobj(wbits=31)  # gzip: checks CRC and length
                out = inflater.decompress(data, OUT_MAX)
                if inflater.eof:
                    data, inflater = inflater.unused_data, None
                else:
                    data = inflater.unconsumed_tail
                if out:
                    unpacked += len(out)
                    if most is not None and unpacked > most:
                        raise self.limits.too_much(self.name)
                    yield out, read
        if inflater is not None:
            raise EOFError(_TRUNCATED)

    # the reading thread

    def _lines(self) -> Iterator[bytes]:
        rest = b""
        given = 0
        while True:
            item = self._blocks.get()
            if isinstance(item, BaseException):
                raise item
            chunk, position = item
            if not chunk:
                if rest:
                    yield rest
                return
            parts = (rest + chunk if rest else chunk).split(b"\n")
            rest = parts.pop()
            self.position = position
            limit = self.limits.line
            if len(rest) > limit or any(len(part) > limit for part in parts):
                # Every line before the long one is given, then the read stops there.
                long = next((n for n, part in enumerate(parts) if len(part) > limit), len(parts))
                yield from parts[:long]
                raise self.limits.too_long(self.name, given + long + 1)
            given += len(parts)
            yield from parts
