"""The orjson paths give the standard library's answers: payload encoding and GH Archive lines."""

from __future__ import annotations

import json
from collections import OrderedDict
from datetime import UTC, datetime

import pytest

from aframes_web.streams.importers.github import _loads as loads
from aframes_web.streams.records import dumps_compact

STD_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


class Text(str):
    pass


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a":1,"b":[true,false,null],"c":{"d":"\\u00e9\\n"}}',
        b'\xef\xbb\xbf{"a":1}',  # a byte-order mark: orjson refuses, json reads it
        b'{"a":NaN,"b":Infinity}',  # json's extension, which orjson refuses
        b'{"a":"\\ud800"}',  # a lone surrogate escape
        b'{"a":1,"a":2}',  # the last of repeated keys
        b"1e400",  # json reads an infinity
        b"[0.1,-1.5e-7,1E5,-0,9223372036854775807,18446744073709551615]",
        '{"t":"caf\u00e9 \u2028 \U0001f600"}'.encode(),
    ],
)
def test_loads_equals_json_loads(raw: bytes) -> None:
    assert repr(loads(raw)) == repr(json.loads(raw))


@pytest.mark.parametrize("raw", [b"[1,]", b'{"a":01}', b'{"a":"\x01"}', b"", b"tru", b"{"])
def test_loads_refuses_what_json_refuses(raw: bytes) -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)
    with pytest.raises(json.JSONDecodeError):
        loads(raw)


def test_loads_invalid_utf8_raises_unicode_error_as_json_does() -> None:
    with pytest.raises(UnicodeDecodeError):
        loads(b'"\xff"')


@pytest.mark.parametrize(
    "value",
    [
        {"type": "push", "value": None, "attributes": {"ref": "main", "n": 3, "ok": True}},
        {"s": 'quote " backslash \\ tab \t nl \n cr \r bell \x07 del \x7f nul \x00'},
        {"u": "caf\u00e9 \u2028 \u2029 \U0001f600", "e": "", "l": [[], {}, [None]]},
        {"f": [0.1, 1.5, -0.0, 3.0, 123456.789, 1e-3], "i": [0, -1, 2**63 - 1, -(2**63)]},
        {"b": 2**64 + 1},  # beyond 64 bits: orjson refuses, json writes it
        {1: "int key"},  # json turns the key into a string
        {"t": Text("a str subclass")},
        OrderedDict([("z", 1), ("a", 2)]),
        [{"nested": [{"deep": {"x": None}}]}],
    ],
)
def test_dumps_compact_equals_json_compact(value: object) -> None:
    assert dumps_compact(value) == STD_COMPACT(value)


@pytest.mark.parametrize(
    "value",
    [
        {"v": float("nan")},
        {"v": None, "attributes": {"rate": float("inf")}},
        {"list": [1, None, [2, {"x": -float("inf")}]]},
        [float("nan")],
        float("nan"),
    ],
)
def test_dumps_compact_refuses_nan_and_infinities(value: object) -> None:
    with pytest.raises(ValueError):
        STD_COMPACT(value)
    with pytest.raises(ValueError):
        dumps_compact(value)


def test_dumps_compact_refuses_types_json_refuses() -> None:
    # orjson would write a datetime; the payload encoder must refuse it as json does.
    with pytest.raises(TypeError):
        dumps_compact({"at": datetime(2026, 1, 1, tzinfo=UTC)})


def test_dumps_compact_writes_nul_as_the_escape_validation_looks_for() -> None:
    assert "\\u0000" in dumps_compact({"title": "a\x00b"})
