"""The pure parts of the chaos benchmark (perf/chaos.py): its own divergence check, the
fault scopes, the memory comparison, the figures and the arguments. No process is started."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from typing import Any

import pytest

from perf import chaos
from perf.chaos import ALL, Fault, Snapshot

T1 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
T2 = datetime(2026, 3, 2, 17, 0, tzinfo=UTC)
T3 = datetime(2026, 3, 3, 9, 0, tzinfo=UTC)


def _snapshot(**changes: Any) -> Snapshot:
    """A consistent store: a desktop entity with two days, the first closed in memory."""
    base = {
        "events": {("desk", "2026-03-02"): (10, T1, T2), ("desk", "2026-03-03"): (4, T3, T3)},
        "entity_days": {
            ("desk", "2026-03-02"): (10, T1, T2),
            ("desk", "2026-03-03"): (4, T3, T3),
        },
        "desktop": {("desk", "2026-03-02"): (10, 0), ("desk", "2026-03-03"): (4, 0)},
        "documents": {("desk", "2026-03-02"): 10, ("desk", "2026-03-03"): 4},
        "pending": {},
        "trajectories": {("desk", "2026-03-02"): 10},
        "jobs": {7: ("done", False, "import-1", 40, 40)},
        "scopes": {"desk": "desktop"},
    }
    base.update(changes)
    return Snapshot(**base)


def test_a_consistent_store_has_no_divergent_row() -> None:
    assert chaos.divergences(_snapshot()) == {}


def test_a_stale_day_summary_is_one_row_saying_both_counts() -> None:
    found = chaos.divergences(
        _snapshot(
            entity_days={
                ("desk", "2026-03-02"): (9, T1, T2),
                ("desk", "2026-03-03"): (4, T3, T3),
            }
        )
    )
    assert list(found) == [("entityday", "desk", "2026-03-02")]
    why = found[("entityday", "desk", "2026-03-02")]
    assert "summary says 9 events" in why and "the events hold 10 events" in why


def test_a_missing_summary_and_one_for_a_day_without_events_both_diverge() -> None:
    found = chaos.divergences(
        _snapshot(
            entity_days={
                ("desk", "2026-03-02"): (10, T1, T2),
                ("desk", "2026-03-05"): (1, T3, T3),
            }
        )
    )
    assert set(found) == {("entityday", "desk", "2026-03-03"), ("entityday", "desk", "2026-03-05")}
    assert "no day summary" in found[("entityday", "desk", "2026-03-03")]
    assert "holds no events" in found[("entityday", "desk", "2026-03-05")]


def test_a_document_behind_its_events_or_missing_diverges() -> None:
    found = chaos.divergences(_snapshot(documents={("desk", "2026-03-02"): 8}))
    assert "read 8 events; the day holds 10" in found[("document", "desk", "2026-03-02")]
    assert "no current document" in found[("document", "desk", "2026-03-03")]


def test_a_document_may_read_the_absences_of_the_day_before_that_reach_in() -> None:
    snap = _snapshot(
        desktop={("desk", "2026-03-02"): (10, 2), ("desk", "2026-03-03"): (4, 0)},
        documents={("desk", "2026-03-02"): 10, ("desk", "2026-03-03"): 6},
    )
    assert chaos.divergences(snap) == {}
    snap.documents[("desk", "2026-03-03")] = 7
    assert ("document", "desk", "2026-03-03") in chaos.divergences(snap)


def test_a_pending_compile_is_a_row_of_its_own() -> None:
    found = chaos.divergences(_snapshot(pending={("desk", "2026-03-03"): (5, 4)}))
    assert found == {("compile", "desk", "2026-03-03"): "compile pending: 5 requests, 4 compiled"}


def test_memory_must_hold_a_closed_days_events_and_close_every_day_before_the_newest() -> None:
    late = chaos.divergences(_snapshot(trajectories={("desk", "2026-03-02"): 9}))
    assert "closed in memory with 9 events; 10 are stored" in late[("memory", "desk", "2026-03-02")]
    unclosed = chaos.divergences(_snapshot(trajectories={}))
    assert "not closed in memory" in unclosed[("memory", "desk", "2026-03-02")]
    # The newest day is still open: nothing says it is complete.
    assert ("memory", "desk", "2026-03-03") not in unclosed


def test_an_import_job_must_end_and_leave_no_upload_and_a_done_one_read_its_file() -> None:
    found = chaos.divergences(
        _snapshot(
            jobs={
                1: ("running", True, "import-1", 0, 40),
                2: ("done", False, "import-2", 39, 40),
                3: ("failed", False, "import-3", 0, 40),
            }
        )
    )
    assert set(found) == {("import", "1", ""), ("import", "2", "")}
    assert "still running" in found[("import", "1", "")]
    assert "upload is still on disk" in found[("import", "1", "")]
    assert "read 39 of the file's 40 records" in found[("import", "2", "")]


def test_a_fault_scope_names_its_rows_every_day_of_an_entity_or_everything() -> None:
    scope = frozenset({("entityday", "desk", "2026-03-02"), ("memory", "desk", "")})
    assert chaos.in_scope(("entityday", "desk", "2026-03-02"), scope)
    assert not chaos.in_scope(("entityday", "desk", "2026-03-03"), scope)
    assert chaos.in_scope(("memory", "desk", "2026-03-09"), scope)
    assert not chaos.in_scope(("memory", "home", "2026-03-02"), scope)
    assert chaos.in_scope(("import", "4", ""), ALL)


def test_the_tasks_a_killed_worker_held_give_the_scope_of_its_fault() -> None:
    held = [
        {"name": "streams.refresh_entity_days", "args": [3, ["2026-03-02", "2026-03-03"]]},
        {"name": "activity.compile_day", "args": "(3, '2026-03-03')"},  # a repr, as older Celery
        {"name": "streams.run_import_job", "args": [9]},
    ]
    scope = chaos.task_scope(held, {3: "desk"}, {9: "import-2"})
    assert ("entityday", "desk", "2026-03-02") in scope
    assert ("document", "desk", "2026-03-03") in scope and (
        "compile",
        "desk",
        "2026-03-03",
    ) in scope
    assert ("memory", "desk", "") in scope and ("import", "9", "") in scope
    assert ("document", "import-2", "") in scope
    assert chaos.task_scope([{"name": "activity.compile_pending", "args": []}], {}, {}) is ALL


def test_certify_reports_become_rows_but_its_cost_trend_does_not() -> None:
    report = {
        "passed": False,
        "entities": [
            {
                "entity": "chaos/desk",
                "cost_flat": False,
                "days": [
                    {"day": "2026-03-02", "recompile": True, "rebuild": True, "append_only": True,
                     "problems": []},
                    {"day": "2026-03-03", "recompile": True, "rebuild": False,
                     "append_only": True, "problems": ["stored document is behind"]},
                ],
            }
        ],
    }  # fmt: skip
    assert chaos.certify_divergences(report) == {
        ("certify", "desk", "2026-03-03"): "stored document is behind"
    }


def test_memory_against_a_rebuild_names_each_differing_row_and_field() -> None:
    kept = {
        "trajectory": [("desk", "2026-03-02", 10, 3, 0, 5, 0, "deterministic")],
        "citation": [("desk", "2026-03-02", 0, 41), ("desk", "2026-03-02", 0, 42)],
        "regularity": [],
    }
    again = {
        "trajectory": [("desk", "2026-03-02", 12, 3, 0, 5, 2, "deterministic")],
        "citation": [("desk", "2026-03-02", 0, 41)],
        "regularity": [],
    }
    found = chaos.memory_diff(kept, again)
    why = found[("memory-rebuild", "desk", "trajectory:2026-03-02")]
    assert "event_count 10 vs rebuild 12" in why and "late_events 0 vs rebuild 2" in why
    assert "segment_count" not in why
    citation = found[("memory-rebuild", "desk", "citation:2026-03-02")]
    assert "event 42) kept by the workers, absent from the rebuild" in citation
    assert chaos.memory_diff(kept, kept) == {}


def _fault(number: int, kind: str, restarted: float | None, healed: float | None) -> Fault:
    fault = Fault(number, kind, killed_at=restarted, restarted_at=restarted)
    fault.converged_at = healed
    return fault


def test_figures_meet_the_targets_only_when_everything_healed_in_time() -> None:
    faults = [
        _fault(1, "summary", 10.0, 20.0),
        _fault(2, "compile", 30.0, 45.0),
        _fault(3, "redis", 50.0, 80.0),
    ]
    result = chaos.figures(faults, divergent=0, events=3000)
    assert result == {
        "kills": 2,
        "restarts": 1,
        "divergent_rows": 0,
        "convergence_s_p95": 30.0,
        "convergence_s_max": 30.0,
        "quiet_convergence_s_max": None,
        "events": 3000,
        "unhealed": 0,
        "not_injected": 0,
        "targets_met": True,
    }
    assert not chaos.figures(faults, divergent=1, events=3000)["targets_met"]
    slow = [*faults, _fault(4, "memory", 100.0, 230.0)]
    assert chaos.figures(slow, 0, 3000)["convergence_s_max"] == 130.0
    assert not chaos.figures(slow, 0, 3000)["targets_met"]


def test_a_fault_that_never_healed_leaves_the_figures_unknown_never_invented() -> None:
    faults = [_fault(1, "summary", 10.0, 20.0), _fault(2, "postgres", 30.0, None)]
    result = chaos.figures(faults, divergent=4, events=100)
    assert result["convergence_s_p95"] is None and result["convergence_s_max"] is None
    assert result["unhealed"] == 1 and not result["targets_met"]
    # The last line is plain JSON: null, not NaN or Infinity.
    assert json.loads(json.dumps(result))["convergence_s_max"] is None


def test_a_fault_that_could_not_be_injected_misses_the_targets_and_says_why() -> None:
    missed = Fault(1, "memory", task="memory.close_due", note="no memory.close_due blocked")
    result = chaos.figures([missed, _fault(2, "redis", 5.0, 9.0)], 0, 100)
    assert result["not_injected"] == 1 and result["kills"] == 0 and not result["targets_met"]
    lines = chaos.report_lines([missed], {}, result, origin=0.0)
    assert any("NOT INJECTED (no memory.close_due blocked)" in line for line in lines)


def test_the_report_lists_divergent_rows_readably_and_each_verdict() -> None:
    faults = [_fault(1, "summary", 10.0, None)]
    faults[0].note = "2 rows of its scope still divergent 300 s after the restart"
    faults[0].gave_up = True
    divergent = {("entityday", "desk", "2026-03-02"): "no day summary; the events hold 3 events"}
    result = chaos.figures(faults, len(divergent), 50)
    lines = chaos.report_lines(faults, divergent, result, origin=0.0)
    assert "  entityday desk 2026-03-02: no day summary; the events hold 3 events" in lines
    assert any("NOT healed (2 rows of its scope" in line for line in lines)
    assert any("Divergent rows at the end: 1 (target 0: MISSED)" in line for line in lines)
    assert any("a fault never healed: target <= 60 s MISSED" in line for line in lines)


def test_each_task_type_is_killed_the_asked_number_of_times_and_each_service_once() -> None:
    plan = chaos.fault_plan(2)
    assert sorted(plan) == sorted([*chaos.TASK_TYPES, *chaos.TASK_TYPES, "redis", "postgres"])


def test_a_schedule_is_repeatable_and_sends_late_and_repeated_batches_after_their_day() -> None:
    day = [{"occurred_at": f"2026-03-0{d}T{h:02d}:00:00Z"} for d in (2, 3, 4) for h in range(24)]
    stream = chaos.Stream("home", "home", "UTC", [day[:24], day[24:48], day[48:]])
    first = chaos.schedule(stream, random.Random(3))
    assert first == chaos.schedule(stream, random.Random(3))
    live = [b for b in first if b.kind == "live"]
    assert [b.day for b in live] == sorted(b.day for b in live)
    late = [(i, b) for i, b in enumerate(first) if b.kind == "late"]
    for index, batch in late:
        assert any(b.day > batch.day for b in first[:index])
    sent = {r["occurred_at"] for b in first for r in b.records}
    assert sent == {r["occurred_at"] for r in day}  # every record, late or not, is sent


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--events", "10"], "--events must be at least 500"),
        (["--kills-per-type", "0"], "--kills-per-type must be at least 1"),
        (["--clients", "1"], "--clients must be from 2"),
        (["--load-s", "60"], "--load-s must be at least 180 s"),
        (["--timeout-s", "1"], "--timeout-s must be at least 10"),
    ],
)
def test_arguments_out_of_range_are_refused_with_the_reason(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        chaos.parse_args(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_the_defaults_are_the_documented_run() -> None:
    args = chaos.parse_args([])
    assert (args.events, args.seed, args.kills_per_type, args.clients) == (40_000, 7, 1, 6)


def test_a_day_both_the_check_and_certify_find_stale_is_counted_once() -> None:
    found = {("document", "desk", "2026-03-03"): "the current document read 3 events"}
    certified = {
        ("certify", "desk", "2026-03-03"): "stored document is behind",
        ("certify", "desk", "2026-03-04"): "rebuild from scratch gives sha256 ab",
    }
    rows = chaos.merged(found, certified)
    assert rows == {
        ("document", "desk", "2026-03-03"): (
            "the current document read 3 events; certify: stored document is behind"
        ),
        ("certify", "desk", "2026-03-04"): "rebuild from scratch gives sha256 ab",
    }


def test_a_heal_says_whether_later_traffic_reached_the_faults_days() -> None:
    events = {("desk", "2026-03-02"): (10, T1, T2), ("home", "2026-03-02"): (5, T1, T2)}
    scope = frozenset({("entityday", "desk", "2026-03-02"), ("memory", "desk", "")})
    assert chaos.scope_events(events, scope) == {("desk", "2026-03-02"): 10}
    assert chaos.scope_events(events, ALL) == {
        ("desk", "2026-03-02"): 10,
        ("home", "2026-03-02"): 5,
    }
    assert chaos.scope_events(events, frozenset({("import", "3", "")})) == {}
    fault = _fault(1, "summary", 10.0, 14.5)
    fault.new_events = 0
    assert chaos.fault_line(fault, 0.0).endswith("healed in 4.5 s (no new event reached its days)")
    fault.new_events = 120
    assert "(120 new events reached its days meanwhile)" in chaos.fault_line(fault, 0.0)


def _streams() -> list[chaos.Stream]:
    desk = [
        [{"occurred_at": f"2026-03-0{d}T{h:02d}:00:00Z", "kind": "input", "source_key": f"d{d}{h}"}
         for h in range(8, 18)]
        for d in (2, 3, 4)
    ]  # fmt: skip
    home = [
        [{"occurred_at": f"2026-03-0{d}T{h:02d}:30:00Z", "kind": "observation",
          "source_key": f"h{d}{h}"} for h in range(24)]
        for d in (2, 3, 4)
    ]  # fmt: skip
    return [
        chaos.Stream("desk", "desktop", "Europe/Berlin", desk),
        chaos.Stream("home", "home", "UTC", home),
    ]


def test_a_quiet_batch_is_new_events_of_the_chosen_day_at_moments_it_already_has() -> None:
    stream = _streams()[1]
    batch = chaos.late_copies(stream, 1, "quiet-x")
    assert batch.entity == "home" and batch.day == "2026-03-03" and batch.kind == "late"
    assert len(batch.records) == chaos.QUIET_EVENTS
    keys = {r["source_key"] for r in stream.days[1]}
    moments = {r["occurred_at"] for r in stream.days[1]}
    for record in batch.records:
        assert record["source_key"] not in keys and record["source_key"].endswith(":quiet-x")
        assert record["occurred_at"] in moments
    assert chaos.late_copies(_streams()[1], 1, "quiet-x") == batch  # the same batch each run


def test_the_quiet_round_makes_each_task_type_run_once_from_closed_days() -> None:
    batches = chaos.quiet_batches(_streams())
    assert list(batches) == list(chaos.TASK_TYPES)
    summary, compile_, memory = batches["summary"], batches["compile"], batches["memory"]
    assert batches["import"] is None  # an import job, as the load's import faults
    assert summary and memory and compile_
    # The home hub has no compile: its batch sets off only the summary and memory's rebuild,
    # on days apart so one fault's repair is not the other's.
    assert (summary.entity, memory.entity) == ("home", "home") and summary.day != memory.day
    assert compile_.entity == "desk" and compile_.day == "2026-03-02"
    # Every day is one before its entity's newest: memory has closed it.
    assert max(summary.day, memory.day) < "2026-03-04"


def test_quiet_faults_count_in_every_figure_and_have_their_own_maximum() -> None:
    quiet = [_fault(3, "summary", 100.0, 140.0), _fault(4, "import", 200.0, 250.0)]
    for fault in quiet:
        fault.quiet = True
    faults = [_fault(1, "summary", 10.0, 15.0), _fault(2, "redis", 20.0, 22.0), *quiet]
    result = chaos.figures(faults, 0, 3000)
    assert result["kills"] == 3 and result["restarts"] == 1
    assert result["convergence_s_max"] == 50.0 and result["quiet_convergence_s_max"] == 50.0
    assert result["targets_met"]
    quiet[0].converged_at = None
    unhealed = chaos.figures(faults, 0, 3000)
    assert unhealed["quiet_convergence_s_max"] is None and not unhealed["targets_met"]
    missed = Fault(5, "memory", quiet=True, note="no memory.close_due blocked")
    assert chaos.figures([*faults[:2], missed], 0, 3000)["quiet_convergence_s_max"] is None


def test_a_quiet_fault_says_it_was_quiet_only_when_nothing_was_sent_after_it() -> None:
    fault = _fault(7, "memory", 10.0, 42.0)
    fault.quiet, fault.traffic_after, fault.new_events = True, 0, 3
    fault.trigger = "3 late events for home 2026-03-03, a day memory had closed"
    assert chaos.fault_line(fault, 0.0).endswith(
        "healed in 32.0 s (quiet: no traffic after the fault)"
    )
    fault.traffic_after = 2
    assert "(NOT quiet: 2 batches or import jobs were sent after the fault)" in chaos.fault_line(
        fault, 0.0
    )
    fault.traffic_after = 0
    loaded = _fault(1, "summary", 1.0, 3.0)
    result = chaos.figures([loaded, fault], 0, 100)
    lines = chaos.report_lines([loaded, fault], {}, result, origin=0.0)
    during = lines.index("Faults during the load (clients still sending):")
    after = next(i for i, line in enumerate(lines) if line.startswith("Quiet round"))
    assert during < after and "quiet: no traffic after the fault" in lines[after]
    assert lines[after + 2] == f"      sent under the lock: {fault.trigger}"
    assert "  of which the quiet round: max 32.0 s (target <= 120 s: met)" in lines
