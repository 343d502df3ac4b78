"""Lines read and inflated ahead by a thread split exactly as iterating a GzipFile does."""

from __future__ import annotations

import gzip
import io
import threading
import zlib

import pytest

from aframes_web.streams.importers import FileTooStrange, ReadLimits
from aframes_web.streams.importers.readahead import ReadAhead

OPEN = ReadLimits(line=1 << 30, unpacked=None)

TEXT = b"".join(b'{"n": %d, "pad": "%s"}\n' % (i, b"x" * (i % 97)) for i in range(3000))


def _lines(data: bytes, *, gzipped: bool, block: int) -> list[bytes]:
    with ReadAhead(io.BytesIO(data), gzipped=gzipped, block=block, limits=OPEN) as lines:
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
        ReadAhead(io.BytesIO(data), gzipped=True, block=1000, limits=OPEN) as lines,
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
    with ReadAhead(io.BytesIO(data), gzipped=True, block=512, limits=OPEN) as lines:
        assert next(lines).startswith(b'{"n": 0')
    assert not any(t.name == "aframes-read-ahead" for t in threading.enumerate())


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_line_past_the_limit_stops_the_read_naming_it(gzipped: bool) -> None:
    text = b"short\n" * 10 + b"y" * 5000 + b"\nafter\n"
    data = gzip.compress(text) if gzipped else text
    got: list[bytes] = []
    with (
        pytest.raises(FileTooStrange, match=r"f.jsonl: line 11 is longer than 0 MiB"),
        ReadAhead(
            io.BytesIO(data),
            gzipped=gzipped,
            block=64,
            limits=ReadLimits(1000, None),
            name="f.jsonl",
        ) as lines,
    ):
        got.extend(lines)
    assert got == [b"short"] * 10


def test_a_file_that_unpacks_past_its_limit_stops() -> None:
    bomb = gzip.compress(b"\n" * 3_000_000)  # a few KiB that unpack to 3 MB of nothing
    with (
        pytest.raises(FileTooStrange, match="unpacks to more than 1,000,000 bytes"),
        ReadAhead(
            io.BytesIO(bomb), gzipped=True, block=1024, limits=ReadLimits(1 << 20, 1_000_000)
        ) as lines,
    ):
        for _line in lines:
            pass


@pytest.mark.parametrize("block", [1, 3, 64, 1 << 20])
def test_numbered_lines_number_the_non_empty_lines_as_iterating_the_file_does(block: int) -> None:
    from aframes_web.streams.importers import numbered_lines

    text = b"a\n\n\nbb\r\n\n" + TEXT[:5000] + b"\n\nlast"
    expected = [
        (number, line.rstrip(b"\n"))
        for number, line in enumerate(io.BytesIO(text), start=1)
        if line.rstrip(b"\n")
    ]
    got = list(numbered_lines(io.BytesIO(text), "f", OPEN, block=block))
    assert got == expected
    assert got[1] == (4, b"bb\r")
    with pytest.raises(FileTooStrange, match="f: line 4 is longer"):
        list(numbered_lines(io.BytesIO(text), "f", ReadLimits(2, None), block=block))
