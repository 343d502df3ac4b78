"""Deterministic daily-trajectory extractors, one per scope (ProactMem §3, trajectories).

The core invariant is checked everywhere: every segment an extractor emits is accepted by the
validator, given the scope's grounding view of the day's events.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aframes_web.streams.importers import fitbit, github, ordonez
from benchmark.synthetic.desktop import generate_day
from compiler.document import compile_day, day_window
from compiler.entities import parse_url
from compiler.sources.events import capture_from_records
from memory.engine.extract import VOCABULARY, extract_day, grounding_view
from memory.engine.extract.code import segments as code_segments
from memory.engine.extract.home import segments as home_segments
from memory.engine.extract.sports import (
    BOUT_MIN_DURATION,
    BOUT_MIN_STEPS_PER_MIN,
    SEDENTARY_MIN_DURATION,
)
from memory.engine.records import EngineEvent, Segment
from memory.engine.validate import validate_segment

ZONE = ZoneInfo("Europe/Berlin")  # UTC+2 in May
BERLIN = ZONE
MADRID = ZoneInfo("Europe/Madrid")
UTC_ZONE = ZoneInfo("UTC")
DAY = date(2024, 5, 1)
DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
MINUTE = timedelta(minutes=1)
BOUT_MINUTES = BOUT_MIN_DURATION // MINUTE
SEDENTARY_MINUTES = SEDENTARY_MIN_DURATION // MINUTE


def local(hour: int, minute: int = 0, second: int = 0, day: date = DAY) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, second, tzinfo=ZONE)


def event(
    id: int, at: datetime, payload: Mapping[str, Any], kind: str = "observation"
) -> EngineEvent:
    return EngineEvent(id=id, at=at, kind=kind, payload=payload)


def extract(
    scope: str,
    events: Sequence[EngineEvent],
    frames: Sequence[Mapping[str, Any]] = (),
    day: date = DAY,
    zone: ZoneInfo = ZONE,
) -> tuple[Segment, ...]:
    """Extract and check the core invariant: every segment validates."""
    segments = extract_day(scope, events, day, zone, frames)
    assert_valid(scope, events, segments, day, zone)
    return segments


def assert_valid(
    scope: str,
    events: Iterable[EngineEvent],
    segments: Iterable[Segment],
    day: date,
    zone: ZoneInfo,
) -> None:
    views = {e.id: grounding_view(scope, e) for e in events}
    for segment in segments:
        verdict = validate_segment(segment, views, day, zone)
        assert verdict.accepted, (segment, verdict.reason)
        assert [f.id for f in segment.facts] == [f"f{n}" for n in range(1, len(segment.facts) + 1)]
        for fact in segment.facts:
            assert fact.value is not None
            assert fact.at is not None and segment.start <= fact.at <= segment.end
            assert fact.path in VOCABULARY[scope][segment.kind]
            assert fact.path[0] != "private"


def of_kind(segments: Iterable[Segment], kind: str) -> list[Segment]:
    return [s for s in segments if s.kind == kind]


def facts(segment: Segment) -> dict[tuple[str, ...], Any]:
    return {f.path: f.value for f in segment.facts}


def fact_types(segment: Segment) -> dict[tuple[str, ...], str]:
    return {f.path: f.type for f in segment.facts}


# --- the API ----------------------------------------------------------------------------------


def test_an_unknown_scope_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"Unknown scope 'kitchen'.*code, desktop, home, sports"):
        extract_day("kitchen", [], DAY, ZONE)
    with pytest.raises(ValueError, match="Unknown scope 'kitchen'"):
        grounding_view("kitchen", event(1, local(9), {}))


def test_a_naive_event_time_is_a_clear_error() -> None:
    naive = event(1, datetime(2024, 5, 1, 9, 0), {"type": "steps"})  # noqa: DTZ001 - the point
    with pytest.raises(ValueError, match="Event 1 has a naive time"):
        extract_day("sports", [naive], DAY, ZONE)


def test_events_of_other_local_days_are_ignored() -> None:
    door = {"type": "door", "value": "OPEN", "attributes": {"sensor": "D001"}}
    today = event(2, local(12), door)
    # 23:30 UTC on April 30 is 01:30 on May 1 in Berlin: today. 22:30 UTC is yesterday.
    early = event(3, datetime(2024, 4, 30, 23, 30, tzinfo=UTC), door)
    yesterday = event(1, datetime(2024, 4, 30, 21, 30, tzinfo=UTC), door)
    tomorrow = event(4, local(0, 5, day=date(2024, 5, 2)), door)
    segments = extract("home", [today, early, yesterday, tomorrow])
    assert sorted(c for s in of_kind(segments, "device_use") for c in s.citations) == [2, 3]


def test_vocabulary_names_every_scope_and_kind() -> None:
    assert set(VOCABULARY) == {"code", "desktop", "home", "sports"}
    assert set(VOCABULARY["sports"]) == {
        "decision_point",
        "step_bout",
        "active_hour",
        "sedentary",
        "day_start",
    }
    assert set(VOCABULARY["home"]) == {"room_presence", "device_use", "day_start"}
    assert set(VOCABULARY["code"]) == {"pull_request", "issue", "review", "ci_run", "release"}
    assert set(VOCABULARY["desktop"]) == {"frame", "first_activity", "last_activity"}


# --- sports -----------------------------------------------------------------------------------


def decision(id: int, at: datetime, **attributes: Any) -> EngineEvent:
    return event(id, at, {"type": "decision_point", "value": 1, "attributes": attributes})


def minute_rows(
    start: datetime, counts: Sequence[int | None], source: str = "jawbone", first_id: int = 1
) -> list[EngineEvent]:
    """One minute row per count, stamped at the end of its minute; None leaves a minute out."""
    rows = []
    for offset, steps in enumerate(counts):
        if steps is None:
            continue
        payload = {
            "type": "steps",
            "value": steps,
            "unit": "count",
            "attributes": {"resolution": "minute", "source": source},
        }
        rows.append(event(first_id + offset, start + (offset + 1) * MINUTE, payload))
    return rows


def hour_rows(start: datetime, counts: Sequence[int], first_id: int = 1) -> list[EngineEvent]:
    return [
        event(
            first_id + offset,
            start + timedelta(hours=offset + 1),
            {
                "type": "steps",
                "value": steps,
                "unit": "count",
                "attributes": {"resolution": "hour", "hour": "x"},
            },
        )
        for offset, steps in enumerate(counts)
    ]


def test_a_decision_point_carries_its_context_before_facts() -> None:
    at = local(9, 30)
    point = decision(
        7,
        at,
        available=True,
        in_transit=False,
        snoozed=False,
        connected=True,
        recognized_activity="still",
        location="home",
        weather="rain",
    )
    (segment,) = extract("sports", [point])
    assert segment.kind == "decision_point"
    assert (segment.start, segment.end, segment.citations) == (at, at, (7,))
    assert facts(segment) == {
        ("type",): "decision_point",
        ("available",): True,
        ("in_transit",): False,
        ("snoozed",): False,
        ("connected",): True,
        ("recognized_activity",): "still",
        ("location",): "home",
    }
    assert fact_types(segment)[("type",)] == "observed"
    assert {fact_types(segment)[(key,)] for key in ("available", "location")} == {"context_before"}


def test_a_decision_point_leaves_out_context_it_does_not_carry() -> None:
    (segment,) = extract("sports", [decision(1, local(9), available=None, location="work")])
    assert facts(segment) == {("type",): "decision_point", ("location",): "work"}


def test_a_step_bout_exactly_at_both_thresholds_is_one_bout_citing_every_minute() -> None:
    rows = minute_rows(local(10), [BOUT_MIN_STEPS_PER_MIN] * BOUT_MINUTES)
    (bout,) = of_kind(extract("sports", rows), "step_bout")
    assert bout.citations == tuple(r.id for r in rows)
    assert (bout.start, bout.end) == (rows[0].at, rows[-1].at)
    assert facts(bout) == {("type",): "steps", ("source",): "jawbone", ("resolution",): "minute"}
    assert all(f.at == rows[0].at for f in bout.facts)


def test_one_minute_too_short_or_one_step_too_few_is_no_bout() -> None:
    short = minute_rows(local(10), [BOUT_MIN_STEPS_PER_MIN] * (BOUT_MINUTES - 1))
    assert of_kind(extract("sports", short), "step_bout") == []
    slow = [BOUT_MIN_STEPS_PER_MIN] * BOUT_MINUTES
    slow[4] = BOUT_MIN_STEPS_PER_MIN - 1
    assert of_kind(extract("sports", minute_rows(local(10), slow)), "step_bout") == []


def test_a_missing_minute_breaks_a_bout() -> None:
    brisk = [120] * BOUT_MINUTES
    rows = minute_rows(local(10), [*brisk, None, *brisk])
    bouts = of_kind(extract("sports", rows), "step_bout")
    assert len(bouts) == 2
    assert not set(bouts[0].citations) & set(bouts[1].citations)
    # The same minutes without the hole are one bout.
    whole = of_kind(extract("sports", minute_rows(local(10), [*brisk, *brisk])), "step_bout")
    assert len(whole) == 1 and len(whole[0].citations) == 2 * BOUT_MINUTES


def test_two_sources_never_merge_into_one_bout() -> None:
    half = BOUT_MINUTES // 2 + 1
    jawbone = minute_rows(local(10), [150] * half, "jawbone", first_id=1)
    google = minute_rows(local(10) + half * MINUTE, [150] * half, "google_fit", first_id=100)
    assert of_kind(extract("sports", [*jawbone, *google]), "step_bout") == []


def test_explicit_zero_rows_make_a_sedentary_stretch_and_missing_rows_do_not() -> None:
    zeros = minute_rows(local(13), [0] * SEDENTARY_MINUTES)
    (stretch,) = of_kind(extract("sports", zeros), "sedentary")
    assert stretch.citations == tuple(r.id for r in zeros)
    assert facts(stretch) == {
        ("type",): "steps",
        ("source",): "jawbone",
        ("resolution",): "minute",
    }
    # One minute short, or one minute missing: no stretch. Hours without rows are unknown.
    short = minute_rows(local(13), [0] * (SEDENTARY_MINUTES - 1))
    assert of_kind(extract("sports", short), "sedentary") == []
    holed = minute_rows(local(13), [0] * 20 + [None] + [0] * 20)
    assert of_kind(extract("sports", holed), "sedentary") == []
    sparse = minute_rows(local(8), [0]) + minute_rows(local(18), [0], first_id=50)
    assert of_kind(extract("sports", sparse), "sedentary") == []


def test_low_rows_count_as_sedentary_up_to_the_rate_and_not_above() -> None:
    low = minute_rows(local(13), [3] * SEDENTARY_MINUTES)
    assert len(of_kind(extract("sports", low), "sedentary")) == 1
    above = minute_rows(local(13), [4] * SEDENTARY_MINUTES)
    assert of_kind(extract("sports", above), "sedentary") == []


def test_hourly_rows_make_sedentary_stretches_and_active_hours_but_never_bouts() -> None:
    rows = hour_rows(local(0), [0, 0, 224, 5000, 6000, 225, 999])
    segments = extract("sports", rows)
    assert of_kind(segments, "step_bout") == []
    (stretch,) = of_kind(segments, "sedentary")
    assert stretch.citations == (1, 2, 3)
    assert facts(stretch) == {("type",): "steps", ("resolution",): "hour"}
    # An hour of at least 1,000 steps held a walk's worth: an active hour, at its row.
    active = of_kind(segments, "active_hour")
    assert [a.citations for a in active] == [(4,), (5,)]
    assert facts(active[0]) == {("type",): "steps", ("resolution",): "hour"}
    assert active[0].start == rows[3].at


def wide(start: datetime, counts: Sequence[int], first_id: int = 1) -> list[EngineEvent]:
    """Fitabase's wide minute rows: an hour's 60 counts a row, stamped at the hour's end."""
    out = []
    for hour in range(0, len(counts), 60):
        minutes = list(counts[hour : hour + 60])
        attributes = {"resolution": "minute", "minutes": minutes, "hour": "x"}
        payload = {"type": "steps_by_minute", "value": sum(minutes), "attributes": attributes}
        out.append(event(first_id + hour // 60, start + timedelta(hours=hour // 60 + 1), payload))
    return out


def test_wide_minute_rows_give_walks_at_their_first_minute_citing_their_hours() -> None:
    # A 15-minute walk from 07:50 to 08:05 spans two hourly rows.
    counts = [0] * 50 + [120] * 15 + [0] * 55
    rows = wide(local(7), counts)
    segments = extract("sports", rows)
    (bout,) = of_kind(segments, "step_bout")
    assert bout.citations == (1, 2)
    assert facts(bout) == {("type",): "steps_by_minute", ("resolution",): "minute"}
    assert all(f.at == local(7, 51) for f in bout.facts)  # the walk's first minute, ended
    (start,) = of_kind(segments, "day_start")
    assert start.facts[0].at == local(7, 51)  # the first minute of someone up and about


# A minute list's rows: None is no row (a missing count), True and False are kept or not.
MINUTE_LISTS = st.lists(st.lists(st.sampled_from([True, False, None]), max_size=12), max_size=5)


@settings(max_examples=300, deadline=None)
@given(lists=MINUTE_LISTS, gaps=st.lists(st.integers(0, 3), min_size=5, max_size=5))
def test_a_minute_lists_rows_at_once_make_the_runs_row_by_row_does(
    lists: list[list[bool | None]], gaps: list[int]
) -> None:
    # The wide rows' fast path (_Runs.add_rows) against the plain one (_Runs.add): lists one
    # after another, some starting exactly where the last ended (the run goes on), some later.
    from memory.engine.extract.sports import MINUTE, _Runs

    one_by_one, at_once = _Runs(MINUTE), _Runs(MINUTE)
    start = local(8)
    for number, (rows, gap) in enumerate(zip(lists, gaps, strict=False), start=1):
        held = event(number, start + MINUTE * len(rows), {"type": "steps_by_minute"})
        follows = False
        for offset, kept in enumerate(rows):
            if kept is None:
                follows = False
                continue
            one_by_one.add(start + MINUTE * (offset + 1), held, kept, follows)
            follows = True
        valid = [(offset, kept) for offset, kept in enumerate(rows) if kept is not None]
        at_once.add_rows(start, valid, held)
        assert (at_once.runs, at_once.open) == (one_by_one.runs, one_by_one.open)
        start += MINUTE * (len(rows) + gap)


def test_the_day_starts_with_the_first_steps_after_five() -> None:
    rows = minute_rows(local(4, 30), [30] * 5) + minute_rows(local(6), [3, 12], first_id=50)
    (start,) = of_kind(extract("sports", rows), "day_start")
    assert start.citations == (51,) and start.start == local(6, 2)


def test_sports_ignores_other_observations() -> None:
    participant = event(1, local(9), {"type": "participant", "value": None, "attributes": {}})
    weight = event(2, local(9), {"type": "weight", "value": 70, "attributes": {}})
    assert extract("sports", [participant, weight]) == ()


# --- home -------------------------------------------------------------------------------------


def sensor(
    id: int, at: datetime, type: str, value: Any, name: str, private: Any = None, **attrs: str
) -> EngineEvent:
    payload: dict[str, Any] = {
        "type": type,
        "value": value,
        "attributes": {"sensor": name, **attrs},
    }
    if private is not None:
        payload["private"] = private
    return event(id, at, payload)


def test_a_room_change_splits_presence_and_off_events_are_not_cited() -> None:
    stream = [
        sensor(1, local(8, 0), "motion", "ON", "M01", room="kitchen"),
        sensor(2, local(8, 1), "motion", "OFF", "M01", room="kitchen"),
        sensor(3, local(8, 2), "motion", "ON", "M02", room="kitchen"),
        sensor(4, local(8, 3), "motion", "ON", "M07", room="living"),
        sensor(5, local(8, 4), "motion", "ON", "M07", room="living"),
        sensor(6, local(8, 5), "motion", "ON", "M01", room="kitchen"),
    ]
    presences = of_kind(extract("home", stream), "room_presence")
    assert [p.citations for p in presences] == [(1, 3), (4, 5), (6,)]
    assert [facts(p) for p in presences] == [
        {("room",): "kitchen"},
        {("room",): "living"},
        {("room",): "kitchen"},
    ]
    assert (presences[0].start, presences[0].end) == (local(8, 0), local(8, 2))


def test_a_long_silence_splits_presence_in_one_room() -> None:
    stream = [
        sensor(1, local(8, 0), "motion", "ON", "M01", room="bed"),
        sensor(2, local(8, 30), "motion", "ON", "M01", room="bed"),  # exactly the gap: kept
        sensor(3, local(9, 0, 1), "motion", "ON", "M01", room="bed"),
    ]
    presences = of_kind(extract("home", stream), "room_presence")
    assert [p.citations for p in presences] == [(1, 2), (3,)]


def test_classic_casas_without_rooms_keeps_sensor_ids_as_citations_never_as_facts() -> None:
    stream = [
        sensor(1, local(8, 0), "motion", "ON", "M003"),
        sensor(2, local(8, 1), "motion", "ON", "M003"),
        sensor(3, local(8, 2), "motion", "ON", "M004"),
        sensor(4, local(8, 3), "motion", "ON", "Hall"),
    ]
    presences = of_kind(extract("home", stream), "room_presence")
    # Each sensor still stands for its own spot (citations), but an id is no fact.
    assert [p.citations for p in presences] == [(1, 2), (3,), (4,)]
    assert [facts(p) for p in presences] == [
        {("type",): "motion"},
        {("type",): "motion"},
        {("sensor",): "Hall"},
    ]


def test_ordonez_pir_is_motion_and_its_place_is_the_room() -> None:
    stream = [sensor(1, local(8), "pir", "ON", "Shower", place="Bathroom")]
    (presence,) = of_kind(extract("home", stream), "room_presence")
    assert facts(presence) == {("place",): "Bathroom"}


def test_each_use_of_a_door_or_appliance_names_it_by_its_role_and_room() -> None:
    stream = [
        sensor(1, local(7, 0), "door", "OPEN", "D001", room="hall"),
        sensor(2, local(7, 1), "door", "CLOSE", "D001", room="hall"),
        sensor(3, local(7, 2), "magnetic", "ON", "Maindoor", place="Entrance"),
        sensor(4, local(7, 3), "magnetic", "OFF", "Maindoor", place="Entrance"),
        sensor(5, local(7, 4), "temperature", 21.5, "T001"),
        sensor(6, local(7, 5), "electric", "ON", "Toaster", place="Kitchen"),
        sensor(7, local(7, 6), "door", "OPEN", "D002"),
    ]
    uses = of_kind(extract("home", stream), "device_use")
    # Closing and switching off end a use; an opaque id is no fact (its kind stands in).
    assert [u.citations for u in uses] == [(1,), (3,), (6,), (7,)]
    assert [facts(u) for u in uses] == [
        {("room",): "hall"},
        {("sensor",): "Maindoor", ("place",): "Entrance"},
        {("sensor",): "Toaster", ("place",): "Kitchen"},
        {("type",): "door"},
    ]
    assert [(u.start, u.end) for u in uses] == [(stream[i].at,) * 2 for i in (0, 2, 5, 6)]


def test_the_day_starts_with_the_first_activation_after_five() -> None:
    stream = [
        sensor(1, local(3, 10), "pir", "ON", "Toilet", place="Bathroom"),  # the night
        sensor(2, local(6, 40), "temperature", 19, "T1", place="Bedroom"),  # ambient: nobody
        sensor(3, local(6, 55), "pressure", "OFF", "Bed", place="Bedroom"),  # an end, no use
        sensor(4, local(7, 2), "pir", "ON", "Basin", place="Bathroom"),
        sensor(5, local(7, 20), "magnetic", "ON", "Fridge", place="Kitchen"),
    ]
    (start,) = of_kind(extract("home", stream), "day_start")
    assert (start.citations, facts(start)) == ((4,), {("place",): "Bathroom"})


def test_an_activation_at_five_exactly_starts_the_day() -> None:
    stream = [
        sensor(1, local(4, 59, 59), "motion", "ON", "M01", room="bedroom"),
        sensor(2, local(5, 0), "motion", "ON", "M01", room="bedroom"),
    ]
    (start,) = of_kind(extract("home", stream), "day_start")
    assert start.citations == (2,)


def test_an_ambient_sensor_switching_on_is_no_use_and_starts_no_day() -> None:
    stream = [
        sensor(1, local(6, 0), "light", "ON", "Lamp", room="bedroom"),
        sensor(2, local(6, 30), "door", "OPEN", "Maindoor", room="hall"),
    ]
    segments = extract("home", stream)
    assert [(s.kind, s.citations) for s in segments] == [("day_start", (2,)), ("device_use", (2,))]


def test_an_event_naming_no_kind_or_no_sensor_or_room_is_no_segment() -> None:
    door = {"type": "door", "value": "OPEN"}
    stream = [
        event(1, local(7, 0), door),  # no attributes
        event(2, local(7, 1), {**door, "attributes": "D001"}),  # attributes that are no mapping
        event(3, local(7, 2), {**door, "attributes": {"sensor": "  ", "room": ""}}),  # blank
        event(4, local(7, 3), {"value": "OPEN", "attributes": {"sensor": "Maindoor"}}),  # no type
        event(5, local(7, 4), {**door, "type": None, "attributes": {"sensor": "Maindoor"}}),
    ]
    assert extract("home", stream) == ()


def test_a_blank_room_is_no_room_so_the_sensor_role_names_the_use() -> None:
    stream = [sensor(1, local(7), "magnetic", "ON", "Fridge", room=" ")]
    (use,) = of_kind(extract("home", stream), "device_use")
    assert facts(use) == {("sensor",): "Fridge"}


def test_home_segments_of_a_whole_day_are_extract_days_with_observed_unnumbered_facts() -> None:
    stream = [
        sensor(1, local(6, 0), "motion", "ON", "M01", room="kitchen"),
        sensor(2, local(6, 10), "motion", "ON", "Hall"),
        sensor(3, local(6, 20), "motion", "ON", "M003"),
        sensor(4, local(6, 30), "magnetic", "ON", "Fridge", place="Kitchen"),
        sensor(5, local(6, 40), "door", "OPEN", "D001", room="hall"),
        sensor(6, local(6, 50), "door", "OPEN", "D002"),
        sensor(7, local(7, 30), "motion", "ON", "M01", room="kitchen"),
    ]
    whole = home_segments(stream, ZONE)
    # The scope module leaves fact ids blank for extract_day to number; every fact is observed.
    assert {(f.id, f.type) for s in whole for f in s.facts} == {("", "observed")}

    def claims(segments: Iterable[Segment]) -> set[tuple[Any, ...]]:
        return {
            (s.kind, s.start, s.end, s.citations, tuple((f.path, f.value) for f in s.facts))
            for s in segments
        }

    assert claims(whole) == claims(extract("home", stream))
    # The zone decides the day's start: 06:00 in Berlin (04:00 UTC) is after five.
    assert [s.citations for s in of_kind(whole, "day_start")] == [(1,)]
    assert [fact_types(s) for s in of_kind(whole, "device_use")] == [
        {("sensor",): "observed", ("place",): "observed"},
        {("room",): "observed"},
        {("type",): "observed"},
    ]


class PrivateGuard(Mapping[str, Any]):
    """A payload that fails the test if anyone reads its ``private`` block."""

    def __init__(self, payload: Mapping[str, Any]) -> None:
        self._payload = dict(payload)

    def __getitem__(self, key: str) -> Any:
        if key == "private":
            raise AssertionError("the extractor read payload['private']")
        return self._payload[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._payload)

    def __len__(self) -> int:
        return len(self._payload)


@pytest.mark.parametrize("scope", ["sports", "home", "code"])
def test_no_extractor_reads_private_ground_truth(scope: str) -> None:
    labelled = [
        EngineEvent(e.id, e.at, e.kind, {**e.payload, "private": {"activity": "Cooking"}})
        for e in mixed_streams()[scope]
    ]
    guarded = [EngineEvent(e.id, e.at, e.kind, PrivateGuard(e.payload)) for e in labelled]
    assert extract_day(scope, guarded, DAY, ZONE) == extract(scope, labelled)


# --- code -------------------------------------------------------------------------------------


def gh(id: int, type: str, value: Any = None, **attributes: Any) -> EngineEvent:
    payload = {"type": type, "value": value, "attributes": {"actor": "ann", **attributes}}
    return event(id, local(10, id), payload)


def one(scope: str, e: EngineEvent) -> Segment:
    (segment,) = extract(scope, [e])
    assert (segment.start, segment.end, segment.citations) == (e.at, e.at, (e.id,))
    return segment


def test_an_opened_pull_request_is_observed() -> None:
    segment = one("code", gh(1, "PullRequestEvent", action="opened", number=7, state="open"))
    assert segment.kind == "pull_request"
    # The kind of work, never the object: a number is a citation, not a routine's fact.
    assert facts(segment) == {
        ("type",): "PullRequestEvent",
        ("action",): "opened",
        ("state",): "open",
    }
    assert set(fact_types(segment).values()) == {"observed"}


def test_a_merging_close_is_an_outcome() -> None:
    closed = gh(1, "PullRequestEvent", action="closed", number=7, state="closed", merged=True)
    segment = one("code", closed)
    assert fact_types(segment) == {
        ("type",): "observed",
        ("action",): "outcome",
        ("state",): "outcome",
        ("merged",): "outcome",
    }
    assert facts(segment)[("merged",)] is True


def test_rest_closing_types_are_outcomes() -> None:
    merged = one("code", gh(1, "pr_merged", number=3, title="Fix", merged_by="bo"))
    assert merged.kind == "pull_request"
    assert fact_types(merged) == {("type",): "outcome"}
    closed = one("code", gh(2, "issue_closed", number=4, state_reason="completed"))
    assert closed.kind == "issue"
    assert fact_types(closed)[("type",)] == "outcome"
    opened = one("code", gh(3, "issue_opened", number=5))
    assert fact_types(opened) == {("type",): "observed"}


def test_issues_comments_and_issue_events_map_by_what_they_are_about() -> None:
    assert one("code", gh(1, "IssuesEvent", action="reopened", number=2)).kind == "issue"
    assert one("code", gh(2, "IssueCommentEvent", action="created", number=2)).kind == "issue"
    on_pr = gh(3, "IssueCommentEvent", action="created", number=9, pull_request=True)
    assert one("code", on_pr).kind == "pull_request"
    closed = one("code", gh(4, "issue_event", event="closed", number=2))
    assert closed.kind == "issue"
    assert fact_types(closed)[("event",)] == "outcome"


def test_reviews_are_review_segments() -> None:
    review = one(
        "code", gh(1, "PullRequestReviewEvent", action="submitted", number=3, state="approved")
    )
    assert review.kind == "review"
    assert facts(review)[("state",)] == "approved"
    assert one("code", gh(2, "pr_review_comment", number=3, path="a.go")).kind == "review"
    assert one("code", gh(3, "PullRequestReviewCommentEvent", action="created")).kind == "review"


def test_a_finished_ci_run_reports_its_conclusion_as_outcome() -> None:
    run = one(
        "code",
        gh(1, "workflow_run", name="CI", status="completed", conclusion="failure", run_number=12),
    )
    assert run.kind == "ci_run"
    assert facts(run) == {
        ("type",): "workflow_run",
        ("name",): "CI",
        ("status",): "completed",
        ("conclusion",): "failure",
    }
    assert fact_types(run)[("conclusion",)] == "outcome"
    queued = one("code", gh(2, "workflow_job", 12.5, name="test", status="queued"))
    assert set(fact_types(queued).values()) == {"observed"}
    # A run not finished yet (no conclusion) states no close, whatever its action says.
    requested = one("code", gh(3, "WorkflowRunEvent", action="requested", status="queued"))
    assert set(fact_types(requested).values()) == {"observed"}


def test_a_conclusion_closes_only_a_ci_run() -> None:
    # Only a CI run finishes by its conclusion; on a pull request the word closes nothing.
    segment = one("code", gh(1, "PullRequestEvent", action="edited", conclusion="success"))
    assert segment.kind == "pull_request"
    assert set(fact_types(segment).values()) == {"observed"}


def test_a_rest_closing_type_reports_its_state_and_merge_as_outcomes() -> None:
    closed = one("code", gh(1, "pr_closed", number=3, state="closed", merged=False))
    assert fact_types(closed) == {
        ("type",): "outcome",
        ("merged",): "outcome",
        ("state",): "outcome",
    }


def test_a_published_release_and_a_tag_are_releases() -> None:
    release = one("code", gh(1, "ReleaseEvent", action="published", tag="v1.0", name="One"))
    assert release.kind == "release"
    assert fact_types(release)[("action",)] == "outcome"
    tag = one("code", gh(2, "CreateEvent", ref="v1.1", ref_type="tag"))
    assert tag.kind == "release"
    assert facts(tag) == {("type",): "CreateEvent", ("ref_type",): "tag"}


def test_pushes_stars_forks_and_branches_make_no_segment() -> None:
    stream = [
        gh(1, "PushEvent", 3, ref="refs/heads/main"),
        gh(2, "WatchEvent", action="started"),
        gh(3, "ForkEvent", fork="bo/app"),
        gh(4, "CreateEvent", ref="feature", ref_type="branch"),
        gh(5, "commit", sha="abc"),
    ]
    assert extract("code", stream) == ()


def test_an_event_without_a_text_type_or_an_attribute_mapping_makes_no_segment() -> None:
    stream = [
        event(1, local(10, 1), {"type": "PullRequestEvent", "attributes": None}),
        event(2, local(10, 2), {"type": "PullRequestEvent", "attributes": ["opened"]}),
        event(3, local(10, 3), {"type": "CreateEvent", "attributes": "tag"}),
        event(4, local(10, 4), {"type": ["IssuesEvent"], "attributes": {"action": "opened"}}),
        event(5, local(10, 5), {"attributes": {"action": "opened"}}),
    ]
    assert extract("code", stream) == ()


def test_code_segments_of_a_whole_day_are_extract_days_with_unnumbered_facts() -> None:
    stream = [
        gh(1, "PullRequestEvent", action="opened", number=7, state="open"),
        gh(2, "PushEvent", 3, ref="refs/heads/main"),
        gh(3, "workflow_run", name="CI", status="completed", conclusion="success"),
    ]
    whole = code_segments(stream, ZONE)
    # The scope module leaves fact ids blank for extract_day to number (f1, f2, ...).
    assert {f.id for s in whole for f in s.facts} == {""}
    numbered = extract("code", stream)
    assert [s.citations for s in whole] == [s.citations for s in numbered] == [(1,), (3,)]

    def claims(segments: Iterable[Segment]) -> list[tuple[Any, ...]]:
        return [(f.type, f.path, f.value, f.at) for s in segments for f in s.facts]

    assert claims(whole) == claims(numbered)


# --- desktop ----------------------------------------------------------------------------------

PR_URL = "https://github.com/acme/app/pull/12"


def snap(id: int, at: datetime, app: str, url: str | None = None) -> EngineEvent:
    payload = {"app": app, "window": "w", "url": url, "focused": True}
    return event(id, at, payload, kind="snapshot")


def frame_doc(
    id: str, app: str, site: str | None, start: str, end: str, rows: str, pages: list[Any]
) -> dict[str, Any]:
    return {
        "id": id,
        "app": app,
        "site": site,
        "start": start,
        "end": end,
        "duration_min": 3.0,
        "pages": pages,
        "evidence": {"rows": rows, "inputs": ""},
    }


def test_the_grounding_view_adds_site_and_page_from_the_snapshots_own_url() -> None:
    row = snap(1, local(9), "Firefox", PR_URL)
    view = grounding_view("desktop", row)
    page = parse_url(PR_URL)
    assert page is not None
    assert view.payload == {
        **row.payload,
        "site": "github.com",
        "page": {"kind": page.kind, "entity": page.entity},
    }
    assert (view.id, view.at, view.kind) == (row.id, row.at, row.kind)
    assert "site" not in row.payload  # the event itself is left alone
    # Other events, other scopes and rows without a web URL are seen as they are.
    click = event(2, local(9), {"type": "click", "url": PR_URL}, kind="input")
    assert grounding_view("desktop", click) is click
    assert grounding_view("code", row) is row
    local_app = snap(3, local(9), "Terminal")
    assert grounding_view("desktop", local_app) is local_app


def test_a_frame_cites_its_rows_of_the_day_and_claims_app_site_and_top_page() -> None:
    page = parse_url(PR_URL)
    assert page is not None
    rows = [
        snap(10, local(9, 0, 0), "  Firefox ", "https://github.com/acme/app"),
        snap(11, local(9, 1, 0), "Firefox", PR_URL),
        snap(12, local(9, 2, 0), "Firefox", PR_URL),
        snap(20, local(9, 1, 30), "Slack"),  # another frame's row, between them
    ]
    frame = frame_doc(
        "f-10",
        "Firefox",
        "github.com",
        "2024-05-01T09:00:00+02:00",
        "2024-05-01T09:03:00+02:00",
        "10-12,99",  # 99 is no event of this day: not cited
        [{"kind": page.kind, "entity": page.entity, "count": 2}],
    )
    segments = extract("desktop", rows, [frame])
    (seg,) = of_kind(segments, "frame")
    assert seg.citations == (10, 11, 12)
    assert seg.source == "f-10"
    assert (seg.start, seg.end) == (local(9), local(9, 3))
    assert facts(seg) == {
        ("app",): "  Firefox ",  # the raw leaf the compiler normalised to "Firefox"
        ("site",): "github.com",
        ("page", "kind"): page.kind,
        ("page", "entity"): page.entity,
    }
    page_fact = next(f for f in seg.facts if f.path == ("page", "kind"))
    assert page_fact.at == local(9, 1)  # the first row on that page


def test_a_frame_interval_covers_rows_the_document_rounded_and_stays_on_the_day() -> None:
    late = snap(1, datetime(2024, 5, 1, 23, 59, 30, 500000, tzinfo=ZONE), "Editor")
    frame = frame_doc(
        "f-1",
        "Editor",
        None,
        "2024-05-01T23:59:30+02:00",
        "2024-05-02T00:01:00+02:00",  # credited past midnight
        "1",
        [],
    )
    (seg,) = of_kind(extract("desktop", [late], [frame]), "frame")
    assert seg.start == local(23, 59, 30)
    assert seg.end.astimezone(ZONE).date() == DAY
    assert seg.end >= late.at
    # A frame whose rows are all of another day is left out.
    other = frame_doc(
        "f-9", "Editor", None, "2024-05-01T08:00:00+02:00", "2024-05-01T08:01:00+02:00", "9", []
    )
    assert of_kind(extract("desktop", [late], [other]), "frame") == []


def test_first_and_last_activity_skip_the_lock_screen() -> None:
    rows = [
        snap(1, local(7), "loginwindow"),
        snap(2, local(8), "Firefox", PR_URL),
        snap(3, local(12), "Terminal"),
        snap(4, local(18), "LockApp"),
    ]
    segments = extract("desktop", rows)
    (first,) = of_kind(segments, "first_activity")
    (last,) = of_kind(segments, "last_activity")
    assert first.citations == (2,) and facts(first) == {
        ("app",): "Firefox",
        ("site",): "github.com",
    }
    assert last.citations == (3,) and facts(last) == {("app",): "Terminal"}


def test_a_frame_document_without_evidence_is_a_clear_error() -> None:
    broken = {"id": "f-1", "app": "X", "start": "2024-05-01T09:00:00+02:00", "end": "x"}
    with pytest.raises(ValueError, match="Frame 'f-1' has no evidence.rows"):
        extract_day("desktop", [snap(1, local(9), "X")], DAY, ZONE, [broken])


# --- a DST day --------------------------------------------------------------------------------

PARIS = ZoneInfo("Europe/Paris")
SPRING = date(2024, 3, 31)  # 02:00 -> 03:00 local


def paris_instants(step: timedelta) -> list[datetime]:
    """UTC instants covering the whole local day, one every ``step``."""
    start = datetime(2024, 3, 31, tzinfo=PARIS).astimezone(UTC)
    end = datetime(2024, 4, 1, tzinfo=PARIS).astimezone(UTC)
    out = []
    while start < end:
        out.append(start)
        start += step
    return out


def test_on_a_dst_day_every_segment_stays_on_the_day_and_validates() -> None:
    # 23 one-hour rows of no steps, each stamped at its hour's end: the last one (24:00) is
    # tomorrow's and dropped; the 22 rows of the day make one sedentary stretch across 02:00.
    hours = [
        event(
            n,
            at + timedelta(hours=1),
            {"type": "steps", "value": 0, "attributes": {"resolution": "hour"}},
        )
        for n, at in enumerate(paris_instants(timedelta(hours=1)), start=1)
    ]
    (stretch,) = of_kind(extract("sports", hours, day=SPRING, zone=PARIS), "sedentary")
    assert len(stretch.citations) == 22
    motions = [
        sensor(n, at, "motion", "ON", "M01", room="hall")
        for n, at in enumerate(paris_instants(timedelta(minutes=20)), start=1)
    ]
    home = extract("home", motions, day=SPRING, zone=PARIS)
    # One presence stretch the whole 23-hour day; the day started at the first one after five.
    assert len(of_kind(home, "room_presence")) == 1
    (start,) = of_kind(home, "day_start")
    assert start.start.astimezone(PARIS).hour == 5
    rows = [
        snap(n, at, "Editor") for n, at in enumerate(paris_instants(timedelta(minutes=30)), start=1)
    ]
    frame = frame_doc(
        "f-1",
        "Editor",
        None,
        "2024-03-31T00:00:00+01:00",
        "2024-04-01T00:00:30+02:00",
        f"1-{len(rows)}",
        [],
    )
    desktop = extract("desktop", rows, [frame], day=SPRING, zone=PARIS)
    for segment in (*home, stretch, *desktop):
        assert segment.start.astimezone(PARIS).date() == SPRING
        assert segment.end.astimezone(PARIS).date() == SPRING


# --- determinism ------------------------------------------------------------------------------


def mixed_streams() -> dict[str, list[EngineEvent]]:
    return {
        "sports": [
            decision(500, local(9), available=True, location="home"),
            *minute_rows(local(10), [130] * 12),
            *minute_rows(local(13), [0] * 45, first_id=100),
            *minute_rows(local(10), [0] * 45, "google_fit", first_id=200),
        ],
        "home": [
            sensor(n, local(8, n % 60, n // 60), "motion", "ON", f"M0{n % 3}", room=f"r{n % 2}")
            for n in range(1, 60)
        ]
        + [
            sensor(100, local(8, 5), "door", "OPEN", "D1"),
            sensor(101, local(8, 5), "door", "CLOSE", "D1"),
        ],
        "code": [
            gh(1, "PullRequestEvent", action="opened", number=1),
            gh(2, "pr_review", number=1, state="approved"),
            event(
                3,
                local(10, 1),
                {"type": "IssuesEvent", "value": None, "attributes": {"action": "closed"}},
            ),
        ],
    }


@pytest.mark.parametrize("scope", ["sports", "home", "code"])
def test_shuffled_input_gives_identical_output(scope: str) -> None:
    stream = mixed_streams()[scope]
    expected = extract(scope, stream)
    assert expected
    for seed in range(5):
        shuffled = list(stream)
        random.Random(seed).shuffle(shuffled)
        assert extract_day(scope, shuffled, DAY, ZONE) == expected
    keys = [(s.start, s.kind, s.citations[:1]) for s in expected]
    assert keys == sorted(keys)


def test_shuffled_desktop_input_and_frames_give_identical_output() -> None:
    day, events, frames = synthetic_desktop_day()
    expected = extract("desktop", events, frames, day=day, zone=BERLIN)
    shuffled, shuffled_frames = list(events), list(frames)
    random.Random(3).shuffle(shuffled)
    random.Random(4).shuffle(shuffled_frames)
    assert extract_day("desktop", shuffled, day, BERLIN, shuffled_frames) == expected


# --- real data --------------------------------------------------------------------------------


def engine_events(
    items: Iterable[tuple[str | None, Mapping[str, Any]]],
) -> dict[Any, list[EngineEvent]]:
    """Importer items as EngineEvents (ids in read order), grouped by (entity, UTC date)."""
    grouped: dict[Any, list[EngineEvent]] = defaultdict(list)
    for number, (entity, item) in enumerate(items, start=1):
        at = datetime.fromisoformat(item["occurred_at"])
        grouped[entity].append(EngineEvent(number, at, item["kind"], item["payload"]))
    return grouped


def by_day(events: Iterable[EngineEvent], zone: ZoneInfo) -> dict[date, list[EngineEvent]]:
    days: dict[date, list[EngineEvent]] = defaultdict(list)
    for e in events:
        days[e.at.astimezone(zone).date()].append(e)
    return days


def run_days(scope: str, streams: Mapping[Any, list[EngineEvent]], zone: ZoneInfo) -> Counter[str]:
    """Extract every entity-day, check the invariant, count the segments per kind."""
    kinds: Counter[str] = Counter()
    for events in streams.values():
        for day, todays in sorted(by_day(events, zone).items()):
            segments = extract(scope, todays, day=day, zone=zone)
            kinds.update(s.kind for s in segments)
    return kinds


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real data not present at {path}")
    return path


@cache
def ordonez_events(home: str) -> tuple[EngineEvent, ...]:
    path = need(DATA / "ordonez-adl" / f"Ordonez{home}_Sensors.txt")
    items = [(None, s.item) for s in ordonez.OrdonezReader(path, MADRID) if s.item is not None]
    return tuple(engine_events(items)[None])


@pytest.mark.parametrize("home", ["A", "B"])
def test_ordonez_homes_every_segment_validates(home: str) -> None:
    kinds = run_days("home", {home: list(ordonez_events(home))}, MADRID)
    assert set(kinds) == {"room_presence", "device_use", "day_start"}


def test_ordonez_output_is_identical_without_private_labels() -> None:
    events = ordonez_events("A")
    assert all("private" in e.payload for e in events)
    stripped = [
        EngineEvent(e.id, e.at, e.kind, {k: v for k, v in e.payload.items() if k != "private"})
        for e in events
    ]
    for day, todays in by_day(events, MADRID).items():
        with_labels = extract_day("home", todays, day, MADRID)
        without = extract_day(
            "home", [s for s in stripped if s.at.astimezone(MADRID).date() == day], day, MADRID
        )
        assert with_labels == without
        assert all(f.path[0] != "private" for s in with_labels for f in s.facts)


def test_fitbit_hourly_steps_every_segment_validates() -> None:
    path = need(DATA / "fitbit-fitabase" / "period-2016-04-12" / "hourlySteps_merged.csv")
    zone = ZoneInfo("America/New_York")
    reader = fitbit.FitabaseReader(path, zone)
    wanted = {"1503960366", "1624580081", "1844505072"}
    items = [(s.entity, s.item) for s in reader if s.item is not None and s.entity in wanted]
    kinds = run_days("sports", engine_events(items), zone)
    # Hourly rows: sedentary stretches (nights, desk hours), never bouts.
    assert kinds["sedentary"] > 0 and kinds["step_bout"] == 0


@pytest.mark.parametrize("folder", ["github-events-k8s-2017", "github-rest-ants"])
def test_github_every_segment_validates(folder: str) -> None:
    path = need(DATA / folder)
    items = [(s.entity, s.item) for s in github.GithubReader(path) if s.item is not None]
    kinds = run_days("code", engine_events(items), UTC_ZONE)
    assert {"pull_request", "issue", "review"} <= set(kinds)


@cache
def synthetic_desktop_day() -> tuple[date, tuple[EngineEvent, ...], tuple[dict[str, Any], ...]]:
    """A SYNTHETIC working day (no real desktop log is available), compiled by the compiler."""
    day = date(2026, 3, 3)
    records = [{**r, "id": n} for n, r in enumerate(generate_day(day, seed=7), start=1)]
    capture = capture_from_records(records, *day_window(day, BERLIN))
    document = compile_day(capture, day, BERLIN.key, generated_at="2026-03-04T00:00:00Z").document
    events = tuple(
        EngineEvent(r["id"], datetime.fromisoformat(r["occurred_at"]), r["kind"], r["payload"])
        for r in records
    )
    return day, events, tuple(document["frames"])


def test_a_compiled_synthetic_desktop_day_gives_one_valid_segment_per_frame() -> None:
    day, events, frames = synthetic_desktop_day()
    segments = extract("desktop", events, frames, day=day, zone=BERLIN)
    kinds = Counter(s.kind for s in segments)
    assert kinds == {"frame": len(frames), "first_activity": 1, "last_activity": 1}
    assert {s.source for s in of_kind(segments, "frame")} == {f["id"] for f in frames}
    with_pages = [s for s in of_kind(segments, "frame") if ("page", "kind") in facts(s)]
    assert with_pages


# --- incremental extraction of an open day ---------------------------------------------------


def _fitbit_wide_day() -> tuple[list[EngineEvent], date]:
    path = need(DATA / "fitbit-fitabase" / "minutes-2016-04-12" / "minuteStepsWide_merged.csv")
    zone = ZoneInfo("America/New_York")
    items = []
    for item in fitbit.FitabaseReader(path, zone):
        if item.item is not None and item.entity == "1503960366":
            items.append((None, item.item))
        if len(items) >= 60:
            break
    events = engine_events(items)[None]
    day = sorted(by_day(events, zone))[1]
    return by_day(events, zone)[day], day


@cache
def _open_day_cases() -> dict[str, tuple[list[EngineEvent], date, ZoneInfo]]:
    cases = {scope: (events, DAY, ZONE) for scope, events in mixed_streams().items()}
    home_events = list(ordonez_events("B"))
    home_day = sorted(by_day(home_events, MADRID))[3]
    cases["ordonez"] = (by_day(home_events, MADRID)[home_day], home_day, MADRID)
    wide_events, wide_day = _fitbit_wide_day()
    cases["fitbit"] = (wide_events, wide_day, ZoneInfo("America/New_York"))
    return cases


def test_an_open_day_counts_every_event_fed_whether_or_not_it_makes_a_segment() -> None:
    from memory.engine.extract import OpenDay

    opened = OpenDay("code", DAY, ZONE)
    opened.feed([gh(1, "PullRequestEvent", action="opened"), gh(2, "PushEvent", 3)])
    opened.feed([gh(3, "WatchEvent", action="started")])
    assert opened.fed == 3
    assert [s.citations for s in opened.segments()] == [(1,)]


@settings(max_examples=80, deadline=None)
@given(
    case=st.sampled_from(["sports", "home", "code", "ordonez", "fitbit"]),
    chunks=st.lists(st.integers(1, 40), min_size=1, max_size=30),
)
def test_an_open_day_extended_event_by_event_equals_extracting_it_from_scratch(
    case: str, chunks: list[int]
) -> None:
    from memory.engine.extract import OpenDay, day_events

    events, day, zone = _open_day_cases()[case]
    scope = {"ordonez": "home", "fitbit": "sports"}.get(case, case)
    ordered = day_events(events, day, zone)
    opened = OpenDay(scope, day, zone)
    fed = 0
    for size in chunks:
        opened.feed(ordered[fed : fed + size])
        fed = min(len(ordered), fed + size)
        assert opened.segments() == extract_day(scope, ordered[:fed], day, zone), fed
    if fed:  # an event out of order is refused: the caller extracts the day afresh
        with pytest.raises(ValueError, match="must come after every event fed before"):
            opened.feed(ordered[:1])


class _NoOffset(tzinfo):
    """A time zone that knows no offset: such a time is as naive as one without a zone."""

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None


def test_scope_and_naive_time_errors_say_what_to_do() -> None:
    from memory.engine.extract import OpenDay

    with pytest.raises(ValueError) as unknown:
        extract_day("kitchen", [], DAY, ZONE)
    assert str(unknown.value) == (
        "Unknown scope 'kitchen': trajectories are extracted for code, desktop, home, sports "
        "only; pass the entity's scope."
    )
    naive = event(7, datetime(2024, 5, 1, 9, 0, tzinfo=_NoOffset()), {"type": "steps"})
    said = (
        "Event 7 has a naive time 2024-05-01T09:00:00; stored events are aware, so build "
        "EngineEvents with their time zone."
    )
    with pytest.raises(ValueError) as whole_day:
        extract_day("sports", [naive], DAY, ZONE)
    assert str(whole_day.value) == said
    with pytest.raises(ValueError) as fed:
        OpenDay("sports", DAY, ZONE).feed([naive])
    assert str(fed.value) == said


def test_an_open_day_refuses_an_event_it_was_fed_already_or_one_before_it() -> None:
    from memory.engine.extract import OpenDay

    first, second = gh(1, "PullRequestEvent", action="opened"), gh(2, "PushEvent", 3)
    opened = OpenDay("code", DAY, ZONE)
    assert opened.extends([first])
    opened.feed([first, second])
    assert opened.last == (second.at, second.id)
    assert opened.extends([])
    assert not opened.extends([second])  # the same (time, id) again
    assert not opened.extends([first])
    with pytest.raises(ValueError) as refused:
        opened.feed([second])
    assert str(refused.value) == ("events must come after every event fed before; start a new day")
    assert opened.fed == 2  # nothing was fed by the refused call
    opened.feed([])
    assert opened.last == (second.at, second.id)


def test_open_day_segments_are_ordered_by_start_kind_first_citation_then_end() -> None:
    from memory.engine.extract import OpenDay

    at = datetime.combine(DAY, datetime.min.time(), ZONE)
    later, latest = at + timedelta(minutes=5), at + timedelta(minutes=9)
    # Same start, kind and first citation: the end decides before the other citations do.
    long_one = Segment(at, latest, (), (1, 2), "pull_request", "code")
    short_one = Segment(at, later, (), (1, 3), "pull_request", "code")
    other_kind = Segment(at, at, (), (0,), "issue", "code")

    class _Cut:
        fed = 0

        def segments(self) -> list[Segment]:
            return [long_one, short_one, other_kind]

    opened = OpenDay("code", DAY, ZONE)
    opened.state = _Cut()
    assert [(s.kind, s.citations) for s in opened.segments()] == [
        ("issue", (0,)),
        ("pull_request", (1, 3)),
        ("pull_request", (1, 2)),
    ]


# --- desktop: every fact, interval and cache rule --------------------------------------------


def _desktop_frame(**changes: Any) -> dict[str, Any]:
    page = parse_url(PR_URL)
    assert page is not None
    frame = frame_doc(
        "f-10",
        "Firefox",
        "github.com",
        "2024-05-01T09:00:00+02:00",
        "2024-05-01T09:03:00+02:00",
        "10-11",
        [{"kind": page.kind, "entity": page.entity, "count": 2}],
    )
    frame.update(changes)
    return frame


def test_desktop_segments_hold_observed_facts_in_the_days_zone() -> None:
    from memory.engine.extract import OpenDay

    rows = [snap(10, local(9), "Firefox", PR_URL), snap(11, local(9, 1), "Firefox", PR_URL)]
    opened = OpenDay("desktop", DAY, ZONE)
    opened.feed(rows)
    assert opened.fed == 2
    first, frame_segment, last = opened.segments([_desktop_frame()])  # by start, then kind
    assert (first.kind, frame_segment.kind, last.kind) == (
        "first_activity",
        "frame",
        "last_activity",
    )
    for segment in (frame_segment, first, last):
        assert {f.type for f in segment.facts} == {"observed"}
        assert [f.id for f in segment.facts] == [f"f{n}" for n in range(1, len(segment.facts) + 1)]
        assert segment.start.tzinfo is ZONE and segment.end.tzinfo is ZONE
    assert [f.path for f in frame_segment.facts] == [
        ("app",),
        ("site",),
        ("page", "kind"),
        ("page", "entity"),
    ]
    assert (first.kind, first.citations, first.start, first.end) == (
        "first_activity",
        (10,),
        local(9),
        local(9),
    )
    assert [f.path for f in last.facts] == [("app",), ("site",)]


def test_a_frame_claims_only_what_a_cited_row_holds() -> None:
    # The first cited row is another app's (an interruption): the app fact is the first row
    # the compiler normalises to the frame's app. No row shows the frame's site or top page.
    rows = [snap(10, local(9), "Slack"), snap(11, local(9, 1), "Firefox")]
    (segment,) = of_kind(extract("desktop", rows, [_desktop_frame()]), "frame")
    assert facts(segment) == {("app",): "Firefox"}
    assert segment.facts[0].at == local(9, 1)
    # A frame with no id has an empty source; one whose rows claim nothing is no segment.
    nameless = _desktop_frame()
    del nameless["id"]
    (segment,) = of_kind(extract("desktop", rows, [nameless]), "frame")
    assert segment.source == ""
    unclaimed = _desktop_frame(app="Code", site=None, pages=[])
    assert of_kind(extract("desktop", rows, [unclaimed]), "frame") == []


def test_a_top_page_without_a_kind_or_an_entity_is_no_fact() -> None:
    # A row without a web URL keeps whatever page its payload holds: a malformed one may
    # match the frame's top page, but a page fact needs both strings.
    odd = event(10, local(9), {"app": "Firefox", "page": {"kind": None, "entity": "x"}}, "snapshot")
    frame = _desktop_frame(site=None, rows="10", pages=[{"kind": None, "entity": "x"}])
    frame["evidence"] = {"rows": "10", "inputs": ""}
    (segment,) = of_kind(extract_day("desktop", [odd], DAY, ZONE, [frame]), "frame")
    assert facts(segment) == {("app",): "Firefox"}


def test_a_frame_past_midnight_ends_at_the_days_last_microsecond() -> None:
    late = snap(1, datetime(2024, 5, 1, 23, 59, 30, tzinfo=ZONE), "Editor")
    frame = frame_doc(
        "f-1", "Editor", None, "2024-05-01T23:59:30+02:00", "2024-05-02T00:01:00+02:00", "1", []
    )
    (segment,) = of_kind(extract("desktop", [late], [frame]), "frame")
    assert segment.end == datetime(2024, 5, 1, 23, 59, 59, 999999, tzinfo=ZONE)


@pytest.mark.parametrize(
    ("start", "shown"),
    [
        (5, "5"),
        ("nine", "'nine'"),
        ("2024-05-01T09:00:00", "'2024-05-01T09:00:00'"),  # no offset
    ],
)
def test_a_frame_time_that_is_no_iso_time_with_an_offset_is_a_clear_error(
    start: object, shown: str
) -> None:
    frame = _desktop_frame(start=start)
    with pytest.raises(ValueError) as refused:
        extract_day("desktop", [snap(10, local(9), "Firefox", PR_URL)], DAY, ZONE, [frame])
    assert str(refused.value) == (
        f"Frame 'f-10' has start {shown}, not an ISO 8601 time with an offset; pass the frames "
        "of a compiled day document."
    )


def test_a_frame_without_evidence_rows_says_what_to_pass() -> None:
    with pytest.raises(ValueError) as refused:
        extract_day("desktop", [], DAY, ZONE, [{"id": "f-1", "evidence": {"inputs": ""}}])
    assert str(refused.value) == (
        "Frame 'f-1' has no evidence.rows; pass the frames of a compiled day document."
    )


def test_views_are_derived_once_per_event_and_a_reused_id_is_told_apart(monkeypatch) -> None:
    from memory.engine.extract import desktop

    monkeypatch.setattr(desktop, "_VIEWS", {})
    row = snap(1, local(9), "Firefox", PR_URL)
    view = desktop.grounding_view(row)
    assert view is not row and desktop.grounding_view(row) is view
    # Another event object that once had this object's id() is not this one.
    stranger = snap(2, local(9), "Firefox", "https://example.org/")
    desktop._VIEWS[id(row)] = (stranger, stranger)
    assert desktop.grounding_view(row).payload["site"] == "github.com"
    # A full cache is emptied before the next view is kept.
    monkeypatch.setattr(desktop, "_CACHED_MAX", 2)
    desktop._VIEWS.clear()
    desktop.grounding_view(snap(3, local(9), "Firefox", PR_URL))
    desktop.grounding_view(snap(4, local(9), "Firefox", PR_URL))
    assert len(desktop._VIEWS) == 2
    fifth = snap(5, local(9), "Firefox", PR_URL)
    desktop.grounding_view(fifth)
    assert list(desktop._VIEWS) == [id(fifth)]


def test_a_frame_is_derived_once_only_when_every_row_is_in(monkeypatch) -> None:
    from memory.engine.extract import desktop

    monkeypatch.setattr(desktop, "_FRAMES", {})
    first, second = snap(10, local(9), "Firefox", PR_URL), snap(11, local(9, 1), "Firefox", PR_URL)
    frame = _desktop_frame()
    views = {first.id: desktop.grounding_view(first)}
    partial = desktop._frame_once(frame, views, DAY, ZONE)
    assert partial is not None and partial.citations == (10,)
    assert desktop._FRAMES == {}  # a row is still missing: derived again next time
    views[second.id] = desktop.grounding_view(second)
    whole = desktop._frame_once(frame, views, DAY, ZONE)
    assert whole is not None and whole.citations == (10, 11)
    assert desktop._frame_once(frame, views, DAY, ZONE) is whole
    assert desktop._FRAMES[(id(frame), DAY, ZONE.key)] == (frame, whole)
    # Another frame object under a reused id() is derived afresh.
    other = _desktop_frame(id="f-11", evidence={"rows": "11", "inputs": ""})
    desktop._FRAMES[(id(other), DAY, ZONE.key)] = (frame, whole)
    again = desktop._frame_once(other, views, DAY, ZONE)
    assert again is not None and again.source == "f-11"
    # A full cache is emptied before the next frame is kept.
    monkeypatch.setattr(desktop, "_CACHED_MAX", 2)
    assert len(desktop._FRAMES) == 2
    third = _desktop_frame(id="f-12")
    desktop._frame_once(third, views, DAY, ZONE)
    assert list(desktop._FRAMES) == [(id(third), DAY, ZONE.key)]


# --- sports: the scope module's own output, every rule at its limit --------------------------


def _steps(id: int, at: datetime, value: object, **attributes: object) -> EngineEvent:
    return event(id, at, {"type": "steps", "value": value, "attributes": attributes})


def test_sports_segments_leave_fact_ids_blank_and_say_what_was_observed() -> None:
    from memory.engine.extract import sports

    decision = event(
        1, local(6), {"type": "decision_point", "attributes": {"available": True, "location": "x"}}
    )
    walk = minute_rows(local(7), [120] * 10, first_id=100)  # exactly ten brisk minutes
    hour = _steps(200, local(9), 1000, resolution="hour")  # exactly an active hour
    day = sports.SportsDay(ZONE)
    day.feed([decision, *walk, hour])
    assert day.fed == 12
    out = day.segments()
    assert [s.kind for s in out] == ["decision_point", "active_hour", "day_start", "step_bout"]
    assert {f.id for s in out for f in s.facts} == {""}  # numbered by extract_day
    said = {s.kind: [(f.type, f.path, f.value, f.at) for f in s.facts] for s in out}
    assert said["decision_point"] == [
        ("observed", ("type",), "decision_point", local(6)),
        ("context_before", ("available",), True, local(6)),
        ("context_before", ("location",), "x", local(6)),
    ]
    assert said["active_hour"] == [
        ("observed", ("type",), "steps", local(9)),
        ("observed", ("resolution",), "hour", local(9)),
    ]
    assert said["day_start"] == [
        ("observed", ("type",), "steps", local(7, 1)),
        ("observed", ("resolution",), "minute", local(7, 1)),
    ]
    assert said["step_bout"] == [
        ("observed", ("type",), "steps", local(7, 1)),
        ("observed", ("source",), "jawbone", local(7, 1)),
        ("observed", ("resolution",), "minute", local(7, 1)),
    ]
    assert sports.segments([decision, *walk, hour], ZONE) == out


def test_sports_rows_that_are_no_steps_are_read_past() -> None:
    from memory.engine.extract import sports

    odd = [
        _steps(1, local(7, 1), "12", resolution="minute"),  # a string is no count
        _steps(2, local(7, 2), True, resolution="minute"),  # nor is a bool
        _steps(3, local(7, 3), float("nan"), resolution="minute"),
        _steps(4, local(7, 4), 50, resolution="day"),  # no resolution we know
        event(5, local(7, 5), {"type": "steps", "value": 50, "attributes": ["minute"]}),
    ]
    day = sports.SportsDay(ZONE)
    day.feed(odd)
    assert day.streams == {} and day.segments() == []


def test_the_day_starts_with_the_first_row_of_someone_up_from_five() -> None:
    from memory.engine.extract import sports

    rows = [
        *minute_rows(local(4, 58), [50, 50], first_id=1),  # before five: asleep or not, no start
        *minute_rows(local(5), [9, 10], first_id=3),  # 9 is not up yet; 10 a minute is
    ]
    (start,) = [s for s in sports.segments(rows, ZONE) if s.kind == "day_start"]
    assert (start.citations, start.start) == ((4,), local(5, 2))
    # An hourly row needs as many steps a minute: 100 in an hour is not getting up.
    lazy = _steps(10, local(6), 100, resolution="hour")
    up = _steps(11, local(7), 600, resolution="hour")
    (start,) = [s for s in sports.segments([lazy, up], ZONE) if s.kind == "day_start"]
    assert start.citations == (11,)
    assert [f.value for f in start.facts] == ["steps", "hour"]


def test_wide_minute_rows_keep_the_days_minutes_their_source_and_nothing_unreadable() -> None:
    from memory.engine.extract import sports

    # Stamped 00:30 local: its 60 minutes run from 23:30 the day before; the 30 after midnight
    # are this day's. One of them is unreadable and ends the walk there.
    minutes = [120] * 45 + ["x"] + [120] * 9 + [0] * 5
    payload = {
        "type": "steps_by_minute",
        "value": 0,
        "attributes": {"resolution": "minute", "minutes": minutes, "source": "fitbit"},
    }
    (walk,) = [
        s for s in sports.segments([event(1, local(0, 30), payload)], ZONE) if s.kind == "step_bout"
    ]
    assert walk.start == local(0, 1)  # the first minute of the day, 00:00-00:01
    assert [f.value for f in walk.facts] == ["steps_by_minute", "fitbit", "minute"]
    # A source that is no string names none; a steps row with a minutes list is still a row.
    payload["attributes"] = {"resolution": "minute", "minutes": [120] * 60, "source": 7}
    (walk,) = [
        s for s in sports.segments([event(1, local(9), payload)], ZONE) if s.kind == "step_bout"
    ]
    assert [f.path for f in walk.facts] == [("type",), ("resolution",)]
    row = _steps(2, local(9), 5, resolution="hour", minutes=[1, 2])
    day = sports.SportsDay(ZONE)
    day.feed([row])
    assert list(day.streams) == [(None, "hour")]


def test_sports_streams_come_out_in_the_order_of_their_sources() -> None:
    from memory.engine.extract import sports

    # An hourly stream of a named source and a minute stream of none, both sedentary.
    hours = [_steps(10 + h, local(10 + h), 0, resolution="hour", source="jawbone") for h in (1, 2)]
    still = [
        event(
            100 + m,
            local(12) + (m + 1) * MINUTE,
            {"type": "steps", "value": 0, "attributes": {"resolution": "minute", "source": 3}},
        )
        for m in range(40)
    ]
    out = [s for s in sports.segments([*still, *hours], ZONE) if s.kind == "sedentary"]
    # Streams are read in the order of their (source, resolution) as text, whatever came first.
    assert [s.citations[0] for s in out] == [11, 100]
    assert [f.path for f in out[1].facts] == [("type",), ("resolution",)]


def test_the_desktop_module_leaves_fact_ids_blank_for_extract_day_to_number() -> None:
    from memory.engine.extract import desktop

    day = desktop.DesktopDay(ZONE)
    day.feed([snap(10, local(9), "Firefox", PR_URL), snap(11, local(9, 1), "Firefox", PR_URL)])
    out = day.segments(DAY, [_desktop_frame()])
    assert [s.kind for s in out] == ["frame", "first_activity", "last_activity"]
    assert [(f.id, f.type) for s in out for f in s.facts] == [("", "observed")] * 8
