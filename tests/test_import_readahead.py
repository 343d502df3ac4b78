"""Lines read and inflated ahead by a thread split exactly as iterating a GzipFile does."""

from __future__ import annotations

import gzip
import io
import threading
import zlib

import pytest

from aframes_web.streams.importers.readahead import ReadAhead

TEXT = b"".join(b'{"n": %d, "pad": "%s"}\n' % (i, b"x" * (i % 97)) for i in range(3000))


def _lines(data: bytes, *, gzipped: bool, block: int) -> list[bytes]:
    with ReadAhead(io.BytesIO(data), gzipped=gzipped, block=block) as lines:
        return list(lines)


def _expected(data: bytes) -> list[bytes]:
    return [line.rstrip(b"\n") for line in gzip.GzipFile(fileobj=io.BytesIO(data))]


@pytest.mark.parametrize("block", [7, 4096, 1 << 20])
def test_gzip_members_and_zero_padding_read_like_gzipfile(block: int) -> None:
    half = len(TEXT) // 2 + 5  # the second member starts inside a line
    data = gzip.compress(TEXT[:half]) + b"\x00" * 9 + gzip.compress(TEXT[half:] + b"last")
    assert _lines(data, gzipped=True, block=block) == _expected(data)
    assert _lines(data, gzipped=True, block=block)[-1] == b"last"


@pytest.mark.parametrize("block", [5, 1 << 20])
def test_plain_files_split_on_newlines(block: int) -> None:
    assert _lines(TEXT + b"tail", gzipped=False, block=block) == TEXT.split(b"\n")[:-1] + [b"tail"]
    assert _lines(b"", gzipped=False, block=block) == []


def test_a_truncated_file_gives_every_whole_line_then_the_error() -> None:
    data = gzip.compress(TEXT)[:-4000]
    got: list[bytes] = []
    with (
        pytest.raises(EOFError, match="ended before the end-of-stream marker"),
        ReadAhead(io.BytesIO(data), gzipped=True, block=1000) as lines,
    ):
        got.extend(lines)
    with pytest.raises(EOFError):
        _expected(data)
    whole = [line.rstrip(b"\n") for line in io.BytesIO(TEXT) if line.endswith(b"\n")]
    assert got == whole[: len(got)] and len(got) > 1000


def test_a_corrupt_checksum_is_an_error() -> None:
    data = bytearray(gzip.compress(TEXT))
    data[-8] ^= 0xFF  # the CRC32 in the trailer
    with pytest.raises(zlib.error, match="incorrect data check"):
        _lines(bytes(data), gzipped=True, block=1 << 16)


def test_leaving_early_stops_the_thread() -> None:
    data = gzip.compress(TEXT * 20)
    with ReadAhead(io.BytesIO(data), gzipped=True, block=512) as lines:
        assert next(lines).startswith(b'{"n": 0')
    assert not any(t.name == "aframes-read-ahead" for t in threading.enumerate())
