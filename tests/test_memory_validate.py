"""Validation of trajectory segments against their cited events (ProactMem, source validation)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, tzinfo
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.engine.records import EngineEvent, Fact, Path, Scalar, Segment
from memory.engine.validate import (
    Grounding,
    IndexCache,
    Verdict,
    accepted,
    leaves,
    validate_extension,
    validate_segment,
)

ZONE = ZoneInfo("Europe/Berlin")  # UTC+2 in May
DAY = date(2024, 5, 1)


def local(hour: int, minute: int = 0, second: int = 0, day: int = 1) -> datetime:
    return datetime(2024, 5, day, hour, minute, second, tzinfo=ZONE)


def event(id: int, at: datetime, payload: Mapping[str, Any], kind: str = "pr") -> EngineEvent:
    return EngineEvent(id=id, at=at, kind=kind, payload=payload)


def fact(id: str, path: Path, value: Scalar, at: datetime | None = None) -> Fact:
    return Fact(id=id, type="observed", path=path, value=value, at=at)


def segment(
    facts: tuple[Fact, ...],
    citations: tuple[int, ...],
    start: datetime | None = None,
    end: datetime | None = None,
) -> Segment:
    return Segment(
        start=start or local(9),
        end=end or local(12),
        facts=facts,
        citations=citations,
    )


def check(seg: Segment, *events: EngineEvent, day: date = DAY, zone: ZoneInfo = ZONE) -> Verdict:
    return validate_segment(seg, {e.id: e for e in events}, day, zone)


PR = event(1, local(10), {"pull_request": {"state": "open", "number": 7}, "action": "opened"})


def test_accepts_a_fact_at_the_identical_path() -> None:
    verdict = check(segment((fact("f1", ("pull_request", "state"), "open"),), (1,)), PR)
    assert verdict.accepted
    assert verdict.reason is None
    assert verdict.grounding == {"f1": Grounding(event_id=1, path=("pull_request", "state"))}


def test_accepts_a_fact_whose_path_is_a_suffix_of_the_payload_path() -> None:
    verdict = check(segment((fact("f1", ("state",), "open"),), (1,)), PR)
    assert verdict.accepted
    assert verdict.grounding["f1"] == Grounding(1, ("pull_request", "state"))


def test_rejects_a_fact_path_longer_than_the_payload_path() -> None:
    # The reverse suffix: the payload path ("action",) is a suffix of the fact path.
    verdict = check(segment((fact("f1", ("pull_request", "action"), "opened"),), (1,)), PR)
    assert not verdict.accepted
    assert "'f1'" in (verdict.reason or "")
    assert "pull_request.action" in (verdict.reason or "")


def test_rejects_a_suffix_that_splits_a_path_component() -> None:
    verdict = check(segment((fact("f1", ("tate",), "open"),), (1,)), PR)
    assert not verdict.accepted


def test_one_ungrounded_leaf_rejects_the_whole_segment() -> None:
    seg = segment(
        (
            fact("f1", ("state",), "open"),
            fact("f2", ("pull_request", "state"), "merged"),
        ),
        (1,),
    )
    verdict = check(seg, PR)
    assert not verdict.accepted
    assert verdict.grounding == {}
    reason = verdict.reason or ""
    assert "'f2'" in reason
    assert "pull_request.state" in reason
    assert "'merged'" in reason
    assert "grounded by no cited event" in reason
    # It tells the auditor what the event holds there instead.
    assert "'open'" in reason


def test_reason_says_when_no_cited_event_has_the_path() -> None:
    verdict = check(segment((fact("f1", ("review", "state"), "open"),), (1,)), PR)
    assert verdict.reason == (
        "Fact 'f1' (review.state = 'open') is grounded by no cited event (cited: 1). "
        "No cited event has that path."
    )


def test_rejects_an_unknown_citation() -> None:
    verdict = check(segment((fact("f1", ("state",), "open"),), (1, 99)), PR)
    assert not verdict.accepted
    assert "Citation 99 is unknown" in (verdict.reason or "")


def test_rejects_a_citation_outside_the_segment_interval() -> None:
    late = event(2, local(13), {"state": "open"})
    verdict = check(segment((fact("f1", ("state",), "open"),), (1, 2)), PR, late)
    assert not verdict.accepted
    reason = verdict.reason or ""
    assert "Cited event 2" in reason
    assert "outside the segment's interval" in reason


def test_the_interval_is_inclusive_at_both_ends() -> None:
    first = event(1, local(9), {"state": "open"})
    last = event(2, local(12), {"state": "closed"})
    seg = segment((fact("f1", ("state",), "open"), fact("f2", ("state",), "closed")), (1, 2))
    assert check(seg, first, last).accepted


def test_rejects_a_citation_from_another_local_day_across_midnight() -> None:
    # 23:30 UTC on 1 May is 01:30 on 2 May in Berlin: the same UTC date, another local day.
    segment_of_may_1 = segment(
        (fact("f1", ("state",), "open"),), (5,), start=local(20), end=local(23, 59)
    )
    after_midnight = event(5, datetime(2024, 5, 1, 23, 30, tzinfo=UTC), {"state": "open"})
    verdict = check(segment_of_may_1, after_midnight)
    assert not verdict.accepted
    reason = verdict.reason or ""
    assert "Cited event 5" in reason
    assert "not of the local day 2024-05-01 in Europe/Berlin" in reason


def test_accepts_an_event_on_the_local_day_whose_utc_date_is_the_day_before() -> None:
    # 22:30 UTC on 30 April is 00:30 on 1 May in Berlin.
    early = event(6, datetime(2024, 4, 30, 22, 30, tzinfo=UTC), {"state": "open"})
    seg = segment((fact("f1", ("state",), "open"),), (6,), start=local(0), end=local(1))
    assert check(seg, early).accepted


def test_rejects_a_segment_that_is_not_within_the_local_day() -> None:
    seg = segment((fact("f1", ("state",), "open"),), (1,), start=local(9), end=local(1, day=2))
    verdict = check(seg, PR)
    assert not verdict.accepted
    assert "segment's end" in (verdict.reason or "")
    assert "not on the local day 2024-05-01" in (verdict.reason or "")


def test_rejects_a_segment_that_ends_before_it_starts() -> None:
    seg = segment((fact("f1", ("state",), "open"),), (1,), start=local(12), end=local(9))
    verdict = check(seg, PR)
    assert not verdict.accepted
    assert "after its end" in (verdict.reason or "")


def test_rejects_a_segment_with_naive_times() -> None:
    seg = segment(
        (fact("f1", ("state",), "open"),),
        (1,),
        start=datetime(2024, 5, 1, 9),  # noqa: DTZ001 - the naive time under test
        end=datetime(2024, 5, 1, 12),  # noqa: DTZ001 - the naive time under test
    )
    verdict = check(seg, PR)
    assert not verdict.accepted
    assert verdict.reason == (
        "The segment's start and end must be aware datetimes (with a time zone)."
    )


def test_strings_compare_trimmed_and_case_folded() -> None:
    shouting = event(1, local(10), {"app": "  Visual STUDIO Code\t"})
    verdict = check(segment((fact("f1", ("app",), "visual studio code "),), (1,)), shouting)
    assert verdict.accepted


def test_strings_compare_with_full_case_folding() -> None:
    street = event(1, local(10), {"place": "STRASSE"})
    assert check(segment((fact("f1", ("place",), "straße"),), (1,)), street).accepted


def test_an_int_equals_the_same_float() -> None:
    steps = event(1, local(10), {"bout": {"minutes": 1.0}})
    assert check(segment((fact("f1", ("minutes",), 1),), (1,)), steps).accepted
    ints = event(1, local(10), {"bout": {"minutes": 1}})
    assert check(segment((fact("f1", ("minutes",), 1.0),), (1,)), ints).accepted


def test_numbers_compare_exactly() -> None:
    half = event(1, local(10), {"ratio": 0.5})
    verdict = check(segment((fact("f1", ("ratio",), 0.50001),), (1,)), half)
    assert not verdict.accepted


def test_true_is_not_one() -> None:
    flags = event(1, local(10), {"draft": True, "count": 1})
    verdict = check(segment((fact("f1", ("count",), True),), (1,)), flags)
    assert not verdict.accepted
    assert "'f1'" in (verdict.reason or "")
    verdict = check(segment((fact("f1", ("draft",), 1),), (1,)), flags)
    assert not verdict.accepted
    assert check(segment((fact("f1", ("draft",), True),), (1,)), flags).accepted


def test_a_numeric_string_is_not_a_number() -> None:
    numbered = event(1, local(10), {"number": "7"})
    assert not check(segment((fact("f1", ("number",), 7),), (1,)), numbered).accepted


def test_none_is_grounded_only_by_null() -> None:
    nulls = event(1, local(10), {"url": None, "title": ""})
    assert check(segment((fact("f1", ("url",), None),), (1,)), nulls).accepted
    assert not check(segment((fact("f1", ("title",), None),), (1,)), nulls).accepted


def test_nan_and_infinities_are_never_grounded() -> None:
    for odd in (float("nan"), float("inf"), float("-inf")):
        scored = event(1, local(10), {"score": odd})
        assert not check(segment((fact("f1", ("score",), odd),), (1,)), scored).accepted


def test_strings_compare_in_unicode_normal_form() -> None:
    composed = event(1, local(10), {"city": "Z\u00fcrich"})
    assert check(segment((fact("f1", ("city",), "Zu\u0308rich"),), (1,)), composed).accepted


def test_times_equal_to_the_minute_match_despite_seconds() -> None:
    merged = event(1, local(10), {"merged_at": "2024-05-01T08:15:42Z"})
    seg = segment((fact("f1", ("merged_at",), "2024-05-01T08:15:03Z"),), (1,))
    assert check(seg, merged).accepted


def test_times_compare_by_utc_instant_across_offsets() -> None:
    merged = event(1, local(10), {"merged_at": "2024-05-01T08:15:42Z"})
    seg = segment((fact("f1", ("merged_at",), "2024-05-01T10:15:00+02:00"),), (1,))
    assert check(seg, merged).accepted


def test_times_in_different_minutes_do_not_match() -> None:
    merged = event(1, local(10), {"merged_at": "2024-05-01T08:15:59Z"})
    seg = segment((fact("f1", ("merged_at",), "2024-05-01T08:16:00Z"),), (1,))
    verdict = check(seg, merged)
    assert not verdict.accepted
    assert "merged_at" in (verdict.reason or "")


def test_a_naive_time_never_matches_an_aware_one() -> None:
    merged = event(1, local(10), {"merged_at": "2024-05-01T08:15:00Z"})
    naive = segment((fact("f1", ("merged_at",), "2024-05-01T08:15:00"),), (1,))
    assert not check(naive, merged).accepted
    naive_event = event(1, local(10), {"merged_at": "2024-05-01 08:15:30"})
    assert check(naive, naive_event).accepted


def test_a_date_alone_compares_as_a_string() -> None:
    due = event(1, local(10), {"due": "2024-05-01"})
    assert not check(segment((fact("f1", ("due",), "2024-05-01T00:00Z"),), (1,)), due).accepted
    assert check(segment((fact("f1", ("due",), " 2024-05-01"),), (1,)), due).accepted


def test_list_items_are_leaves_at_the_list_path() -> None:
    labelled = event(1, local(10), {"issue": {"labels": ["bug", "UI"]}})
    seg = segment((fact("f1", ("labels",), "ui"), fact("f2", ("issue", "labels"), "bug")), (1,))
    verdict = check(seg, labelled)
    assert verdict.accepted
    assert verdict.grounding["f1"] == Grounding(1, ("issue", "labels"))
    assert not check(segment((fact("f1", ("labels",), "docs"),), (1,)), labelled).accepted


def test_dicts_inside_lists_continue_the_path() -> None:
    labelled = event(1, local(10), {"labels": [{"name": "bug"}, {"name": "ui"}]})
    seg = segment((fact("f1", ("labels", "name"), "ui"),), (1,))
    assert check(seg, labelled).accepted
    # The index is not a path component.
    assert not check(segment((fact("f1", ("1", "name"), "ui"),), (1,)), labelled).accepted


def test_nested_dicts_are_walked_to_their_leaves() -> None:
    deep = event(1, local(10), {"check_run": {"app": {"owner": {"login": "GitHub"}}}})
    seg = segment((fact("f1", ("owner", "login"), "github"),), (1,))
    verdict = check(seg, deep)
    assert verdict.accepted
    assert verdict.grounding["f1"].path == ("check_run", "app", "owner", "login")
    # A dict is not a leaf.
    assert not check(segment((fact("f1", ("owner",), "github"),), (1,)), deep).accepted


def test_the_earliest_cited_event_grounds_a_fact() -> None:
    later = event(2, local(11), {"state": "open"})
    earlier = event(3, local(10), {"state": "open"})
    verdict = check(segment((fact("f1", ("state",), "open"),), (2, 3)), later, earlier)
    assert verdict.grounding["f1"] == Grounding(3, ("state",))


def test_rejects_a_segment_without_citations() -> None:
    verdict = check(segment((fact("f1", ("state",), "open"),), ()), PR)
    assert not verdict.accepted
    assert verdict.reason == "The segment cites no events, so none of its facts can be grounded."


def test_rejects_a_segment_without_facts() -> None:
    verdict = check(segment((), (1,)), PR)
    assert not verdict.accepted
    assert verdict.reason == "The segment has no facts; there is nothing to validate."


def test_rejects_duplicate_fact_ids() -> None:
    seg = segment((fact("f1", ("state",), "open"), fact("f1", ("number",), 7)), (1,))
    verdict = check(seg, PR)
    assert not verdict.accepted
    assert "'f1' appears more than once" in (verdict.reason or "")


def test_rejects_a_fact_with_an_empty_path() -> None:
    verdict = check(segment((fact("f1", (), "open"),), (1,)), PR)
    assert not verdict.accepted
    assert "empty field path" in (verdict.reason or "")


def test_rejects_a_fact_dated_outside_the_segment() -> None:
    seg = segment((fact("f1", ("state",), "open", at=local(13)),), (1,))
    verdict = check(seg, PR)
    assert not verdict.accepted
    assert "'f1' is dated" in (verdict.reason or "")


def test_leaves_walks_a_payload_in_order() -> None:
    payload = {"a": {"b": 1, "c": [True, {"d": None}, ["x"]]}, "e": [], "f": {}, 3: "skip"}
    assert list(leaves(payload)) == [
        (("a", "b"), 1),
        (("a", "c"), True),
        (("a", "c", "d"), None),
        (("a", "c"), "x"),
    ]


STATES = ("open", "closed", "merged", "draft")
STREAM = tuple(
    event(i, local(9) + timedelta(minutes=20 * i), {"pr": {"state": STATES[i % 4], "n": i}})
    for i in range(1, 9)
)
FACT_POOL = tuple(
    fact(f"f{i}", ("state",) if i % 2 else ("pr", "n"), STATES[i % 4] if i % 2 else i)
    for i in range(1, 9)
)


@settings(max_examples=200, deadline=None)
@given(
    facts=st.lists(st.sampled_from(FACT_POOL), min_size=1, max_size=5, unique=True),
    # Mostly valid citations, so accepted verdicts are drawn as well as each kind of rejection.
    citations=st.lists(st.integers(1, 7), min_size=1, max_size=7, unique=True)
    | st.lists(st.integers(1, 10), min_size=1, max_size=5, unique=True),
    data=st.data(),
)
def test_permuting_citations_and_facts_never_changes_the_verdict(
    facts: list[Fact], citations: list[int], data: st.DataObject
) -> None:
    events = {e.id: e for e in STREAM}  # 9 and 10 are unknown; 8 lies past the segment's end
    seg = segment(tuple(facts), tuple(citations), start=local(9), end=local(11, 30))
    shuffled = segment(
        tuple(data.draw(st.permutations(facts))),
        tuple(data.draw(st.permutations(citations))),
        start=local(9),
        end=local(11, 30),
    )
    first = validate_segment(seg, events, DAY, ZONE)
    second = validate_segment(shuffled, events, DAY, ZONE)
    assert first == second
    assert first.accepted == (first.reason is None)
    assert first.accepted == (set(first.grounding) == {f.id for f in facts})


class _NoOffset(tzinfo):
    """A zone that knows no offset: a time carrying it is still naive (datetime's definition)."""

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None

    def tzname(self, dt: datetime | None) -> str | None:
        return None


def test_a_time_whose_zone_gives_no_offset_is_naive() -> None:
    unknown = datetime(2024, 5, 1, 9, tzinfo=_NoOffset())
    seg = segment((fact("f1", ("state",), "open"),), (1,), start=unknown, end=unknown)
    verdict = check(seg, PR)
    assert not verdict.accepted
    assert verdict.reason == (
        "The segment's start and end must be aware datetimes (with a time zone)."
    )


def test_rejects_a_segment_with_one_naive_end() -> None:
    seg = segment(
        (fact("f1", ("state",), "open"),),
        (1,),
        start=local(9),
        end=datetime(2024, 5, 1, 12),  # noqa: DTZ001 - the naive time under test
    )
    verdict = check(seg, PR)
    assert not verdict.accepted
    assert verdict.reason == (
        "The segment's start and end must be aware datetimes (with a time zone)."
    )


def test_the_reason_names_a_start_that_is_not_on_the_local_day() -> None:
    seg = segment(
        (fact("f1", ("state",), "open"),),
        (1,),
        start=datetime(2024, 4, 30, 23, tzinfo=ZONE),
        end=local(9),
    )
    verdict = check(seg, PR)
    assert verdict.reason == (
        "The segment's start 2024-04-30T23:00:00+02:00 is not on the local day 2024-05-01 "
        "in Europe/Berlin."
    )


def test_the_ungrounded_reason_lists_the_cited_events_and_the_values_held() -> None:
    other = event(2, local(11), {"review": {"state": "approved"}})
    verdict = check(segment((fact("f1", ("state",), "merged"),), (1, 2)), PR, other)
    assert verdict.reason == (
        "Fact 'f1' (state = 'merged') is grounded by no cited event (cited: 1, 2). "
        "At that path they hold 'open', 'approved'."
    )


def test_the_ungrounded_reason_quotes_at_most_three_values() -> None:
    held = event(1, local(10), {"labels": ["bug", "ui", "docs", "ci"], "tags": ["a", "b", "c"]})
    four = check(segment((fact("f1", ("labels",), "perf"),), (1,)), held)
    assert (four.reason or "").endswith(" At that path they hold 'bug', 'ui', 'docs', ....")
    three = check(segment((fact("f1", ("tags",), "d"),), (1,)), held)
    assert (three.reason or "").endswith(" At that path they hold 'a', 'b', 'c'.")


def test_values_that_are_not_json_scalars_are_not_leaves() -> None:
    payload = {"raw": b"bytes", "when": datetime(2024, 5, 1, tzinfo=UTC), "ids": {1, 2}}
    assert list(leaves({**payload, "state": "open"})) == [(("state",), "open")]


def test_an_event_indexed_once_is_not_indexed_again_with_a_cache() -> None:
    seg = segment((fact("f1", ("state",), "open"),), (1,))
    cache: IndexCache = {}
    first = validate_segment(seg, {1: PR}, DAY, ZONE, index_cache=cache)
    assert first.accepted
    index = cache[1]
    assert validate_segment(seg, {1: PR}, DAY, ZONE, index_cache=cache) == first
    assert cache[1] is index


def test_a_search_indexes_only_the_cited_events_it_reaches() -> None:
    # A stay in a room cites every motion event of it; its facts are held by the first, so
    # grounding indexes that one and stops. A fact held only by a later event reaches it.
    stay = [
        event(i, local(10, i), {"type": "motion", "attributes": {"room": "Kitchen"}, "n": i})
        for i in range(1, 41)
    ]
    by_id = {e.id: e for e in stay}
    room = fact("f1", ("room",), "Kitchen")
    cache: IndexCache = {}
    verdict = validate_segment(segment((room,), tuple(by_id)), by_id, DAY, ZONE, index_cache=cache)
    assert verdict.accepted and verdict.grounding == {"f1": Grounding(1, ("attributes", "room"))}
    assert list(cache) == [1]
    later = fact("f2", ("n",), 3)
    verdict = validate_segment(
        segment((room, later), tuple(by_id)), by_id, DAY, ZONE, index_cache=cache
    )
    assert verdict.accepted and verdict.grounding["f2"] == Grounding(3, ("n",))
    assert sorted(cache) == [1, 2, 3]
    # An ungrounded fact reads every cited event, and the reason names them all.
    missing = check(segment((fact("f3", ("n",), 99),), tuple(by_id)), *stay)
    assert not missing.accepted and "(cited: 1, 2, 3, " in (missing.reason or "")
    assert "40)." in (missing.reason or "")


def test_the_index_holds_every_leaf_of_leaves_in_payload_order_each_path_once_per_value() -> None:
    # A wearable's hour: sixty minute counts at one path, most of them equal. Grounding finds
    # the first path holding a value; the index keeps each (value, path) once, in the order
    # leaves() walks them, nested lists and mappings included.
    from memory.engine.canonical import canonical
    from memory.engine.validate import _index

    payload = {
        "type": "steps_by_minute",
        "attributes": {"minutes": [0, 0, 12, 0, 12.0, None, "x", True], "source": "fitbit"},
        "nested": [{"minutes": [0, [3, 0]]}, "x"],
    }
    index = _index(event(1, local(10), payload))
    expected: dict[object, list[Path]] = {}
    for path, value in leaves(payload):
        key = canonical(value)
        if key is not None and path not in expected.setdefault(key, []):
            expected[key].append(path)
    assert index == expected
    assert index[canonical(0)] == [("attributes", "minutes"), ("nested", "minutes")]
    assert index[canonical(12)] == [("attributes", "minutes")]  # 12 and 12.0, once
    assert index[canonical(True)] == [("attributes", "minutes")]  # a bool stays a bool


# Payloads as JSON gives them and as callers may hand them: read-only mappings, tuples, keys
# that are not strings and values that are not JSON scalars among the leaves.
_PAYLOAD_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5, float("nan")]),
    st.sampled_from(["x", "X ", "open", "2024-05-01T10:00"]),
    st.just(b"raw"),
)
_PAYLOADS = st.recursive(
    _PAYLOAD_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from(["a", "b", "type", 1]), inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "c"]), inner, max_size=2).map(MappingProxyType),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(payload=st.dictionaries(st.sampled_from(["type", "value", "attributes"]), _PAYLOADS))
def test_the_index_of_any_payload_is_what_leaves_walks(payload: dict[str, Any]) -> None:
    from memory.engine.canonical import canonical
    from memory.engine.validate import _index

    # Each value's paths in the order leaves() walks them, a path not repeated straight after
    # itself (grounding takes the first path that fits, so a later repeat changes nothing).
    expected: dict[object, list[Path]] = {}
    for path, value in leaves(payload):
        key = canonical(value)
        if key is not None and expected.get(key, [()])[-1] != path:
            expected.setdefault(key, []).append(path)
    assert _index(event(1, local(10), payload)) == expected


# -- a stretch that grew: only its new citations are checked -------------------------------------


def _motion(id: int, at: datetime, room: str = "Kitchen") -> EngineEvent:
    return event(id, at, {"type": "motion", "value": "ON", "attributes": {"room": room}})


def _stretch(*events: EngineEvent, end: datetime | None = None) -> Segment:
    room = (fact("f0", ("room",), "Kitchen", events[0].at),)
    return Segment(
        events[0].at, end or events[-1].at, room, tuple(e.id for e in events), "room_presence"
    )


@settings(max_examples=200, deadline=None)
@given(
    gaps=st.lists(st.integers(min_value=0, max_value=600), min_size=2, max_size=12),
    cut=st.integers(min_value=1, max_value=11),
    rooms=st.lists(st.sampled_from(["Kitchen", "kitchen ", "Hall"]), min_size=12, max_size=12),
    lost=st.sets(st.integers(min_value=0, max_value=11), max_size=2),
    late=st.booleans(),
)
def test_a_grown_stretch_gets_the_verdict_a_whole_validation_gives_it(
    gaps: list[int], cut: int, rooms: list[str], lost: set[int], late: bool
) -> None:
    # A stretch of motion events (some in another room, some missing from the day's events,
    # one possibly past midnight), validated as it stood after `cut` events, then grown.
    at = local(22)
    events = []
    for n, gap in enumerate(gaps):
        at += timedelta(seconds=gap)
        events.append(_motion(n + 1, at + timedelta(hours=3) if late and n == len(gaps) - 1
                              else at, rooms[n]))  # fmt: skip
    cut = min(cut, len(events) - 1)
    day = {e.id: e for i, e in enumerate(events) if i not in lost}
    before, grown = _stretch(*events[:cut]), _stretch(*events)
    prior = accepted(before, validate_segment(before, day, DAY, ZONE), day)
    whole = validate_segment(grown, day, DAY, ZONE)
    if prior is None:
        return  # a rejected stretch is never extended: the whole validation words its reason
    found = validate_extension(prior, grown, day, DAY, ZONE)
    if found is None:
        return  # no extension (or a new citation with a problem): validated whole
    assert found.verdict == whole and whole.accepted
    assert found.latest == max((day[i].at, i) for i in grown.citations)


def test_only_a_stretch_that_extends_an_accepted_one_skips_its_earlier_citations() -> None:
    a, b, c = _motion(1, local(9)), _motion(2, local(9, 5)), _motion(3, local(9, 9))
    day = {e.id: e for e in (a, b, c)}
    before = _stretch(a, b)
    prior = accepted(before, validate_segment(before, day, DAY, ZONE), day)
    assert prior is not None and prior.latest == (local(9, 5), 2)
    grown = validate_extension(prior, _stretch(a, b, c), day, DAY, ZONE)
    assert grown is not None and grown.verdict is prior.verdict and grown.latest == (c.at, 3)
    # Not an extension: other facts, another start, an earlier end, the same citations, other
    # earlier citations, a new event no later than the last one.
    other_room = replace(_stretch(a, b, c), facts=(fact("f0", ("room",), "Hall", a.at),))
    assert validate_extension(prior, other_room, day, DAY, ZONE) is None
    assert validate_extension(prior, _stretch(b, c), day, DAY, ZONE) is None
    assert validate_extension(prior, _stretch(a, b, c, end=local(9, 4)), day, DAY, ZONE) is None
    assert validate_extension(prior, _stretch(a, b), day, DAY, ZONE) is None
    assert validate_extension(prior, _stretch(a, c, b), day, DAY, ZONE) is None
    early = _motion(0, local(9, 5))  # the same time as b, a lower id: it sorts before b
    assert validate_extension(prior, _stretch(a, b, early), {**day, 0: early}, DAY, ZONE) is None
    # A new citation with a problem leaves the verdict to the whole validation, worded as ever.
    missing = replace(_stretch(a, b, c), citations=(1, 2, 4))
    assert validate_extension(prior, missing, day, DAY, ZONE) is None
    assert "Citation 4 is unknown" in (validate_segment(missing, day, DAY, ZONE).reason or "")
    # A rejected segment is never one to extend.
    assert accepted(missing, validate_segment(missing, day, DAY, ZONE), day) is None
