"""The command line's index of an ActivityWatch export: a day read through it is the day a read
of the whole export gives, and it is used only for the very file it was made from."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmark.synthetic import aw_day
from compiler.sources import SourceError, activitywatch, aw_index, open_source
from compiler.sources._common import span_of

TZ = "Europe/Berlin"
LAST = date(2026, 3, 6)  # a Friday: the export holds the working days before it too
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("AFRAMES_CACHE_DIR", str(folder))
    return folder / "activitywatch"


def export(days: int = 4, last: date = LAST) -> dict[str, Any]:
    """A SYNTHETIC export of ``days`` working days up to ``last``, newest first as
    ActivityWatch writes them, with a non-ASCII title on every day."""
    buckets: dict[str, Any] = {}
    at = last
    made = 0
    while made < days:
        if at.weekday() < 5:
            for key, bucket in aw_day.generate(at, TZ).export["buckets"].items():
                events = buckets.setdefault(key, {**bucket, "events": []})["events"]
                events.extend(bucket["events"])
            made += 1
        at -= timedelta(days=1)
    window = next(b for k, b in buckets.items() if k.startswith("aw-watcher-window"))
    for event in window["events"][::50]:
        event["data"] = {**event["data"], "title": "Grüße – café ☕ " + event["data"]["title"]}

    def terminal(before_midnight: float, day: date, duration: float, title: str) -> None:
        start = aw_day.local_day_bounds(day, TZ)[0] - before_midnight
        window["events"].insert(0, {
            "timestamp": datetime.fromtimestamp(start, UTC).isoformat(),
            "duration": duration,
            "data": {"app": "Terminal", "title": title},
        })  # fmt: skip

    # A late night into the last day: its rows after midnight are the last day's.
    terminal(600, last, 1500.0, "late night")
    # And one that ends 15 s into a day, its second heartbeat the day's first row.
    for day in (last, last - timedelta(days=1)):
        terminal(20, day, 35.0, "just past midnight")
    return {"buckets": buckets}


def day_window(day: date) -> tuple[float, float]:
    return aw_day.local_day_bounds(day, TZ)


def write(path: Path, data: Any, **dumps: Any) -> Path:
    path.write_text(json.dumps(data, **dumps), encoding="utf-8")
    return path


def whole(path: Path, start: float, end: float) -> Any:
    return activitywatch.open_export(path, span=span_of(start, end)).read(start, end)


def indexed(path: Path, start: float, end: float) -> Any:
    return activitywatch.open_export(path, span=span_of(start, end), index=True).read(start, end)


def test_a_day_read_through_the_index_is_the_day_a_whole_read_gives(tmp_path, cache) -> None:
    path = write(tmp_path / "aw.json", export(), ensure_ascii=False)
    days = [LAST - timedelta(days=k) for k in range(7)]  # a weekend and days before the export
    for day in days:
        start, end = day_window(day)
        expected = whole(path, start, end)
        assert indexed(path, start, end) == expected, day  # the first read makes the index
        assert [p.suffix for p in cache.iterdir()] == [".idx"]
        assert indexed(path, start, end) == expected, day  # later reads use it
    first, last = day_window(days[-1])[0], day_window(days[0])[1]
    assert indexed(path, first, last) == whole(path, first, last)  # a range of days
    start, end = day_window(LAST)
    read = indexed(path, start, end)
    assert any("café" in (s.window or "") for s in read.snapshots)
    assert read.snapshots[0].window == "late night" and read.snapshots[0].t == start
    assert "just past midnight" in {s.window for s in read.snapshots}
    assert any(s.url for s in read.snapshots)


def test_a_read_through_the_index_parses_only_the_events_near_its_day(
    tmp_path, cache, monkeypatch
) -> None:
    path = write(tmp_path / "aw.json", export())
    start, end = day_window(LAST)
    expected = indexed(path, start, end)
    asked: list[int] = []
    events_at = aw_index.events_at

    def counted(name: str, spans: Any, blob: bytes | None = None) -> list[Any]:
        asked.append(len(spans))
        assert blob is None  # the export is not read whole
        return events_at(name, spans, blob)

    def never(*_args: Any) -> Any:
        raise AssertionError("the whole export was parsed")

    monkeypatch.setattr(aw_index, "events_at", counted)
    monkeypatch.setattr(aw_index, "parse", never)
    monkeypatch.setattr(activitywatch, "_parsed", never)
    assert indexed(path, start, end) == expected
    events = sum(len(b["events"]) for b in json.loads(path.read_text())["buckets"].values())
    assert 0 < asked[0] < events / 3  # one day's window and web events of four days' export


def test_the_index_holds_no_title_app_or_url(tmp_path, cache) -> None:
    data = export(days=1)
    path = write(tmp_path / "aw.json", data)
    start, end = day_window(LAST)
    indexed(path, start, end)
    [made] = cache.iterdir()
    assert made.stat().st_mode & 0o077 == 0  # readable by its owner alone
    blob = made.read_bytes()
    for bucket in data["buckets"].values():
        for event in bucket["events"]:
            for key in ("title", "app", "url"):
                value = event["data"].get(key)
                if isinstance(value, str) and len(value) > 3:
                    assert value.encode() not in blob, value


def test_an_export_written_again_is_read_again_and_indexed_anew(tmp_path, cache) -> None:
    path = write(tmp_path / "aw.json", export())
    start, end = day_window(LAST)
    indexed(path, start, end)
    before = path.stat()
    # Every event of the day an hour later: the same length, so the same file size.
    changed = path.read_text().replace(f"{LAST.isoformat()}T0", f"{LAST.isoformat()}T1")
    assert changed != path.read_text()
    path.write_text(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same mtime
    assert path.stat().st_size == before.st_size
    assert indexed(path, start, end) == whole(path, start, end)


def test_a_broken_index_is_made_anew(tmp_path, cache) -> None:
    path = write(tmp_path / "aw.json", export(days=2))
    start, end = day_window(LAST)
    expected = indexed(path, start, end)
    [made] = cache.iterdir()
    blob = made.read_bytes()
    for broken in (blob[: len(blob) // 2], b"junk", blob[:-1], blob + b"x", b""):
        made.write_bytes(broken)
        assert indexed(path, start, end) == expected
        assert made.read_bytes() == blob


def test_an_index_that_cannot_be_written_is_no_error(tmp_path, monkeypatch) -> None:
    taken = tmp_path / "a-file"
    taken.write_text("not a folder")
    monkeypatch.setenv("AFRAMES_CACHE_DIR", str(taken))
    path = write(tmp_path / "aw.json", export(days=2))
    start, end = day_window(LAST)
    assert indexed(path, start, end) == whole(path, start, end)


def test_a_broken_event_fails_the_first_read_as_before_and_leaves_no_index(tmp_path, cache) -> None:
    data = export(days=2)
    window = next(b for k, b in data["buckets"].items() if k.startswith("aw-watcher-window"))
    window["events"][-1]["timestamp"] = "yesterday"  # an event far from the day asked for
    path = write(tmp_path / "aw.json", data)
    start, end = day_window(LAST)
    with pytest.raises(SourceError) as plain:
        whole(path, start, end)
    with pytest.raises(SourceError) as through_index:
        indexed(path, start, end)
    assert str(through_index.value) == str(plain.value)
    assert "is not ISO 8601" in str(plain.value)
    assert not cache.exists() or not list(cache.iterdir())
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(SourceError, match="not a JSON ActivityWatch export"):
        indexed(path, start, end)


@pytest.mark.parametrize(
    "shape",
    ["gzip", "list of buckets", "one bucket", "utf-16", "utf-8 with BOM", "surrogates"],
)
def test_an_export_of_another_shape_or_encoding_is_read_whole_every_time(
    tmp_path, cache, shape
) -> None:
    data = export(days=2)
    path = tmp_path / "aw.json"
    text = json.dumps(data)
    if shape == "gzip":
        path.write_bytes(gzip.compress(text.encode()))
    elif shape == "list of buckets":
        write(path, {"buckets": [{"id": k, **b} for k, b in data["buckets"].items()]})
    elif shape == "one bucket":
        key = next(k for k in data["buckets"] if k.startswith("aw-watcher-window"))
        write(path, {"id": key, **data["buckets"][key]})
    elif shape == "utf-16":
        path.write_bytes(text.encode("utf-16"))
    elif shape == "utf-8 with BOM":
        path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    else:  # a lone surrogate, which json reads and strict UTF-8 does not
        path.write_bytes(text.replace('"data": {"app"', '"data": {"x": "\ud800", "app"', 1).encode(
            "utf-8", "surrogatepass"
        ))  # fmt: skip
    start, end = day_window(LAST)
    for _ in range(2):
        assert indexed(path, start, end) == whole(path, start, end)
    assert not cache.exists() or not list(cache.iterdir())


def test_events_without_data_and_repeated_keys_read_as_json_reads_them(tmp_path, cache) -> None:
    data = export(days=1)
    window = next(b for k, b in data["buckets"].items() if k.startswith("aw-watcher-window"))
    for event in window["events"][::7]:
        del event["data"]
    text = json.dumps(data, indent=1)
    # A key given twice: the last one counts, for json.loads and for the index alike.
    text = text.replace('"events": [', '"events": [], "events": [', 1)
    path = tmp_path / "aw.json"
    path.write_text(text, encoding="utf-8")
    start, end = day_window(LAST)
    expected = whole(path, start, end)
    assert indexed(path, start, end) == expected
    assert indexed(path, start, end) == expected


# Text as a UTF-8 file can hold it (no lone surrogates), as the walk is given it.
_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=6)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    buckets=st.dictionaries(
        _text,
        st.fixed_dictionaries(
            {}, optional={"events": st.lists(_json, max_size=4), "id": _json, "type": _json}
        ),
        max_size=3,
    ),
    extra=st.dictionaries(st.sampled_from(["meta", "version"]), _json, max_size=2),
    indent=st.sampled_from([None, 0, 2, "\t"]),
    ascii_only=st.booleans(),
    unusual=st.sampled_from([None, "events", "bucket", "buckets", "cut", "more", "wrapped"]),
)
def test_the_walk_reads_what_json_reads_and_places_every_event(
    buckets, extra, indent, ascii_only, unusual
) -> None:
    data: Any = {**extra, "buckets": buckets}
    if unusual == "events" and buckets:  # events that are not an array
        next(iter(buckets.values()))["events"] = {"not": "an array"}
    elif unusual == "bucket" and buckets:  # a bucket that is not an object
        buckets[next(iter(buckets))] = []
    elif unusual == "buckets":  # buckets as an array
        data["buckets"] = list(buckets.values())
    text = json.dumps(data, indent=indent, ensure_ascii=ascii_only)
    if unusual == "cut":
        text = text[:-1]
    elif unusual == "more":
        text += " x"
    elif unusual == "wrapped":
        text = f"[{text}]"
    walked = aw_index.parse(text)
    usual = unusual is None or (unusual in ("events", "bucket") and not buckets)
    assert (walked is not None) == usual
    if walked is None:
        return
    found, places = walked
    assert json.dumps(found, sort_keys=True) == json.dumps(json.loads(text), sort_keys=True)
    raw = text.encode("utf-8")
    for bucket in found["buckets"].values():
        if "events" in bucket:
            events, starts, ends = places[id(bucket["events"])]
            assert events is bucket["events"]
            lo, hi = aw_index.byte_offsets(text, starts), aw_index.byte_offsets(text, ends)
            for event, a, b in zip(events, lo, hi, strict=True):
                assert json.dumps(json.loads(raw[a:b])) == json.dumps(event)


def test_the_command_line_keeps_its_index_in_the_cache_folder_unless_told_not_to(
    tmp_path,
) -> None:
    path = write(tmp_path / "aw.json", export(days=2))
    env = {**os.environ, "AFRAMES_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "compiler", "day", "--source", f"activitywatch:{path}",
            "--date", LAST.isoformat(), "--tz", TZ, "-f", "context"]  # fmt: skip
    plain = subprocess.run([*argv, "--no-index"], env=env, cwd=ROOT, capture_output=True,
                           text=True, check=True)  # fmt: skip
    assert not (tmp_path / "cache").exists()
    outputs = [
        subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert [o.stdout for o in outputs] == [plain.stdout] * 2
    assert len(list((tmp_path / "cache" / "activitywatch").iterdir())) == 1
    assert open_source(f"activitywatch:{path}", *day_window(LAST)) is not None


def test_an_index_made_by_other_reader_code_is_made_anew(tmp_path, cache, monkeypatch) -> None:
    # Ids and times come from the reader's code: a changed reader never trusts an old index.
    path = write(tmp_path / "aw.json", export(days=2))
    start, end = day_window(LAST)
    expected = indexed(path, start, end)
    [made] = cache.iterdir()
    before = made.read_bytes()
    monkeypatch.setattr(aw_index, "reader", lambda: "another reader")
    assert aw_index.read(str(cache), str(path)) is None
    assert indexed(path, start, end) == expected
    assert made.read_bytes() != before  # written again, by this reader
    assert aw_index.read(str(cache), str(path)) is not None
    monkeypatch.setattr(aw_index, "reader", lambda: None)  # its source unreadable: no index
    made.unlink()
    assert indexed(path, start, end) == expected
    assert not made.exists()
