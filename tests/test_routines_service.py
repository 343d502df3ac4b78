"""Patterns, routines and the cost report over stored days: the service, REST, MCP, command."""

from __future__ import annotations

import json
from datetime import date
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from aframes_web.activity.routines import (
    WindowInvalid,
    cost_markdown,
    entity_cost,
    entity_history,
    entity_patterns,
    entity_routines,
    window_days,
)
from aframes_web.mcp import tools
from aframes_web.mcp.tools import ToolFailure
from aframes_web.streams.models import Event
from aframes_web.streams.services import entity_create
from aframes_web.teams.auth import Principal
from compiler.document import expand_runs
from tests.conftest import snapshot
from tests.routine_days import EXPENSE_TARGETS, FIRST, expense_days

pytestmark = pytest.mark.django_db

BASE = "/api/v1/entities/alice-laptop"


@pytest.fixture
def expenses(load: Any, desktop: Any) -> Any:
    """Four mornings, each filing one expense (tests/routine_days.py)."""
    load(desktop, expense_days(4))
    return desktop


def _expense_routine(answer: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in answer["routines"] if r["steps"][0]["target"] == "New expense")


# --- the service ------------------------------------------------------------------------------


def test_window_is_the_last_days_with_activity(expenses) -> None:
    assert window_days(entity=expenses) == [date(2026, 3, n) for n in (2, 3, 4, 5)]
    assert window_days(entity=expenses, days=2) == [date(2026, 3, 4), date(2026, 3, 5)]
    between = window_days(entity=expenses, start=date(2026, 3, 3), end=date(2026, 3, 4))
    assert between == [date(2026, 3, 3), date(2026, 3, 4)]


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"days": 0}, "days must be a whole number from 1 to 90, got 0."),
        ({"days": 91}, "from 1 to 90, got 91"),
        ({"days": 2, "start": date(2026, 3, 2)}, "Give days, or from and to, not both."),
        ({"start": date(2026, 3, 5), "end": date(2026, 3, 2)}, "is after to 2026-03-02"),
    ],
)
def test_bad_windows_are_refused_with_what_to_ask_instead(kwargs, says, desktop) -> None:
    with pytest.raises(WindowInvalid, match=says.replace("(", r"\(")):
        window_days(entity=desktop, **kwargs)


def test_a_range_longer_than_the_cap_is_refused(desktop, load, monkeypatch) -> None:
    monkeypatch.setattr("aframes_web.activity.routines.WINDOW_DAYS_MAX", 2)
    load(desktop, [snapshot(f"2026-03-0{n}T09:00:00+01:00", f"k{n}") for n in (2, 3, 4)])
    with pytest.raises(WindowInvalid, match="holds 3 days with activity; at most 2"):
        window_days(entity=desktop, start=date(2026, 3, 1), end=date(2026, 3, 9))


def test_only_desktop_entities_have_a_history(team) -> None:
    flat = entity_create(team=team, key="flat", scope="home")
    with pytest.raises(WindowInvalid, match="'flat' is a home entity"):
        entity_history(entity=flat)


def test_routines_carry_occurrences_evidence_plan_script_and_ratios(expenses) -> None:
    answer = entity_routines(entity=expenses)
    assert answer["window"] == {"days": 4, "from": "2026-03-02", "to": "2026-03-05"}
    routine = _expense_routine(answer)
    assert [s["target"] for s in routine["steps"]] == EXPENSE_TARGETS
    assert routine["count"] == 4 and routine["length"] == 5
    assert [o["day"] for o in routine["occurrences"]] == [f"2026-03-0{n}" for n in (2, 3, 4, 5)]
    first = routine["occurrences"][0]
    assert first["start"] == "2026-03-02T09:00:13+01:00"
    # The evidence names exactly the five input events of that morning.
    named = Event.objects.filter(id__in=expand_runs(first["evidence"]))
    assert sorted(e.payload["element_name"] for e in named) == sorted(EXPENSE_TARGETS)
    assert routine["script"].splitlines()[0] == "click New expense"
    assert routine["plan"]["routine"] == routine["id"]
    assert routine["plan_tokens"] > routine["script_tokens"] > 0
    assert routine["r_info"] > routine["r_inject"] > 1
    assert routine["guard_coverage"] == 1.0
    assert answer["summary"]["h_specific"] > 0
    # Deterministic: the same stored days give the same answer.
    assert entity_routines(entity=expenses) == answer


def test_routines_at_url_granularity_and_bad_choices(expenses) -> None:
    url = entity_routines(entity=expenses, granularity="url")
    assert url["granularity"] == "url"
    with pytest.raises(WindowInvalid, match="granularity must be one of action, url"):
        entity_routines(entity=expenses, granularity="clicks")
    with pytest.raises(WindowInvalid, match="screen must be one of 1512x982"):
        entity_routines(entity=expenses, screen="800x600")


def test_patterns_come_from_the_detectors(expenses) -> None:
    answer = entity_patterns(entity=expenses)
    kinds = {p["kind"] for p in answer["patterns"]}
    assert "repeated_click" in kinds
    save = next(p for p in answer["patterns"] if '"Save"' in p["label"])
    assert save["count"] == 4 and save["evidence"]["frames"]


def test_an_entity_without_activity_has_nothing_to_report(desktop) -> None:
    assert entity_patterns(entity=desktop)["patterns"] == []
    answer = entity_routines(entity=desktop)
    assert answer["routines"] == [] and answer["window"]["days"] == 0


def test_the_cost_report_covers_both_granularities_and_the_holdout(expenses) -> None:
    seen: list[tuple[int, int]] = []
    cost = entity_cost(entity=expenses, fit_days=3, progress=lambda i, n, d: seen.append((i, n)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    action = cost["granularities"]["action"]
    assert set(cost["granularities"]) == {"action", "url"}
    assert action["holdout"]["fit_days"] == ["2026-03-02", "2026-03-03", "2026-03-04"]
    assert action["holdout"]["h_holdout"] == 1.0  # the last morning repeats the known routine
    # Fitted on two days, nothing recurs 3 times yet: nothing later is known.
    early = entity_cost(entity=expenses, fit_days=2)["granularities"]["action"]["holdout"]
    assert early["known_routines"] == 0 and early["h_holdout"] == 0.0
    assert action["ceiling"] is not None and 0 < action["ceiling"] <= action["h_specific"]
    with pytest.raises(WindowInvalid, match="fit_days 4 leaves nothing to hold out"):
        entity_cost(entity=expenses, fit_days=4)
    with pytest.raises(WindowInvalid, match="fit_days must be at least 1"):
        entity_cost(entity=expenses, fit_days=0)


# --- REST -------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/patterns", "/routines"])
def test_rest_owner_and_reader_read_an_outsider_sees_no_entity(
    path, owner_api, reader_api, outsider_api, expenses
) -> None:
    assert owner_api.get(BASE + path).status_code == 200
    assert reader_api.get(BASE + path).status_code == 200
    theirs = outsider_api.get(BASE + path)
    assert theirs.status_code == 404
    assert theirs.json()["detail"] == "Team 'globex' has no entity 'alice-laptop'."


@pytest.mark.parametrize("path", ["/patterns", "/routines"])
def test_rest_needs_read_scope_and_a_desktop_entity(path, team, make_client, owner_api) -> None:
    entity_create(team=team, key="flat", scope="home")
    denied = make_client(team, ["write"], "writer").get("/api/v1/entities/flat" + path)
    assert denied.status_code == 403 and "'read' scope" in denied.json()["detail"]
    home = owner_api.get("/api/v1/entities/flat" + path)
    assert home.status_code == 404
    assert "'flat' is a home entity; only desktop entities" in home.json()["detail"]
    assert "patterns and routines" in home.json()["detail"]
    unknown = owner_api.get("/api/v1/entities/nobody" + path)
    assert unknown.status_code == 404 and "has no entity 'nobody'" in unknown.json()["detail"]


@pytest.mark.parametrize(
    ("query", "name", "says"),
    [
        ("days=0", "days", "must be from 1 to 90, got 0."),
        ("days=91", "days", "must be from 1 to 90, got 91."),
        ("days=week", "days", "must be a whole number from 1 to 90, got 'week'."),
        ("days=", "days", "is empty"),
        ("granularity=clicks", "granularity", "must be one of action, url."),
        ("screen=800x600", "screen", "must be one of 1512x982"),
    ],
)
def test_rest_bad_parameters_are_400_naming_them(query, name, says, owner_api, desktop) -> None:
    path = "/patterns" if name == "days" else "/routines"
    for where in {path, "/routines"}:
        answer = owner_api.get(f"{BASE}{where}?{query}")
        assert answer.status_code == 400, (where, query)
        assert says in answer.json()["fields"][name][0]
        assert answer.json()["detail"].startswith(f"{name}: ")


def test_rest_routines_answer_the_service(owner_api, expenses) -> None:
    answer = owner_api.get(f"{BASE}/routines?days=3&granularity=action")
    assert answer.status_code == 200
    body = answer.json()
    assert body == json.loads(json.dumps(entity_routines(entity=expenses, days=3)))
    assert _expense_routine(body)["count"] == 3
    patterns = owner_api.get(f"{BASE}/patterns?days=3").json()
    assert patterns["window"]["days"] == 3 and patterns["patterns"]
    assert patterns == json.loads(json.dumps(entity_patterns(entity=expenses, days=3)))


# --- MCP ----------------------------------------------------------------------------------------


def _principal(team: Any, scopes: tuple[str, ...] = ("read",)) -> Principal:
    return Principal(team=team, scopes=frozenset(scopes))


def test_mcp_get_patterns_answers_from_the_detectors(team, expenses) -> None:
    found = json.loads(tools.get_patterns(_principal(team), entity="alice-laptop", days=3))
    assert (found["days"], found["from"], found["to"]) == (3, "2026-03-03", "2026-03-05")
    full = entity_patterns(entity=expenses, days=3)["patterns"]
    assert [(p["kind"], p["label"], p["count"]) for p in found["patterns"]] == [
        (p["kind"], p["label"], p["count"]) for p in full
    ]
    assert found["not_shown"] == {}
    first_click = next(p for p in found["patterns"] if p["kind"] == "repeated_click")
    assert first_click["evidence"]["rows_total"] == len(expand_runs(full[0]["evidence"]["rows"]))


def test_mcp_get_patterns_shows_the_strongest_of_each_kind(team, expenses, monkeypatch) -> None:
    monkeypatch.setattr("aframes_web.mcp.tools.PATTERNS_PER_KIND", 1)
    monkeypatch.setattr("aframes_web.mcp.tools.EVIDENCE_FRAMES_SHOWN", 2)
    monkeypatch.setattr("aframes_web.mcp.tools.EVIDENCE_ROWS_SHOWN", 3)
    found = json.loads(tools.get_patterns(_principal(team), entity="alice-laptop", days=4))
    full = entity_patterns(entity=expenses, days=4)["patterns"]
    kinds = [p["kind"] for p in full]
    assert [p["kind"] for p in found["patterns"]] == sorted(set(kinds), key=kinds.index)
    assert found["not_shown"] == {k: kinds.count(k) - 1 for k in set(kinds) if kinds.count(k) > 1}
    first = found["patterns"][0]
    assert (first["label"], first["count"]) == (full[0]["label"], full[0]["count"])
    assert first["evidence"]["frames"] == full[0]["evidence"]["frames"][:2]
    assert first["evidence"]["frames_total"] == len(full[0]["evidence"]["frames"])
    assert len(expand_runs(first["evidence"]["rows"])) == 3


@pytest.mark.parametrize("days", [0, 91])
def test_mcp_get_patterns_refuses_bad_days(days, team, expenses) -> None:
    with pytest.raises(ToolFailure, match=f"days must be from 1 to 90, got {days}."):
        tools.get_patterns(_principal(team), entity="alice-laptop", days=days)


def test_mcp_get_patterns_of_a_home_or_an_empty_or_a_missing_entity(team, desktop) -> None:
    entity_create(team=team, key="flat", scope="home")
    with pytest.raises(ToolFailure, match="'flat' is a home entity"):
        tools.get_patterns(_principal(team), entity="flat", days=7)
    with pytest.raises(ToolFailure, match="has no desktop activity yet"):
        tools.get_patterns(_principal(team), entity="alice-laptop", days=7)
    with pytest.raises(ToolFailure, match="has no entity 'nobody'"):
        tools.get_patterns(_principal(team), entity="nobody", days=7)
    with pytest.raises(ToolFailure, match="needs the 'read' scope"):
        tools.get_patterns(_principal(team, ("write",)), entity="alice-laptop", days=7)


# --- manage.py cost_report ------------------------------------------------------------------------


def test_cost_report_writes_json_and_markdown(tmp_path, expenses) -> None:
    err = StringIO()
    out = tmp_path / "report"
    call_command(
        "cost_report", "--team", "acme", "--entity", "alice-laptop", "--out", str(out), stderr=err
    )
    cost = json.loads((out / "cost.json").read_text())
    assert cost["window"]["days"] == 4 and cost["screen"] == "1512x982"
    routine = _expense_routine(cost["granularities"]["action"])
    assert routine["count"] == 4
    markdown = (out / "cost.md").read_text()
    assert markdown.startswith("# Routines and cost: alice-laptop")
    row = next(line for line in markdown.splitlines() if routine["id"] in line)
    assert "New expense → type Amount → type Merchant → Category → Save" in row
    assert f"| 5 | 4 | {routine['plan_tokens']} | {routine['script_tokens']} |" in row
    assert "h_specific" in markdown and "ceiling" in markdown
    assert "compiling 2026-03-02 (1/4)" in err.getvalue()
    assert "wrote" in err.getvalue()


def test_the_markdown_states_a_zero_holdout_ceiling_and_a_missing_holdout(expenses) -> None:
    cost = entity_cost(entity=expenses, fit_days=3)
    action = cost["granularities"]["action"]
    action["ceiling_holdout"] = 0.0  # nothing on the later days was a known routine
    assert "on the hold-out 0.0 %" in cost_markdown(cost)
    action["holdout"] = action["ceiling_holdout"] = None
    assert "hold-out: too few days" in cost_markdown(cost)


def test_cost_report_takes_a_range_a_screen_and_the_fit_days(tmp_path, expenses) -> None:
    call_command(
        "cost_report",
        *("--team", "acme", "--entity", "alice-laptop", "--out", str(tmp_path)),
        *("--from", "2026-03-03", "--to", "2026-03-05", "--screen", "1280x800"),
        *("--fit-days", "1"),
        stderr=StringIO(),
    )
    cost = json.loads((tmp_path / "cost.json").read_text())
    assert cost["window"] == {"days": 3, "from": "2026-03-03", "to": "2026-03-05"}
    assert cost["screen"] == "1280x800" and cost["fit_days"] == 1
    assert cost["granularities"]["action"]["holdout"]["fit_days"] == ["2026-03-03"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--team", "nope", "--entity", "alice-laptop"], "No team 'nope'"),
        (["--team", "acme", "--entity", "nobody"], "Team 'acme' has no entity 'nobody'"),
        (["--team", "acme", "--entity", "alice-laptop", "--days", "0"], "from 1 to 90, got 0"),
        (
            ["--team", "acme", "--entity", "alice-laptop", "--days", "2", "--from", "2026-03-02"],
            "Give days, or from and to, not both.",
        ),
        (["--team", "acme", "--entity", "alice-laptop", "--from", "March"], "'March' is not a"),
        (["--team", "acme", "--entity", "alice-laptop", "--fit-days", "9"], "leaves nothing"),
        (["--team", "acme", "--entity", "flat"], "'flat' is a home entity"),
    ],
)
def test_cost_report_bad_arguments_say_what_was_wrong(tmp_path, args, says, expenses, team):
    entity_create(team=team, key="flat", scope="home")
    with pytest.raises(CommandError, match=says.replace("(", r"\(")):
        call_command("cost_report", *args, "--out", str(tmp_path / "r"), stderr=StringIO())


def test_cost_report_refuses_a_file_as_out(tmp_path, expenses) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(CommandError, match="is a file; give a folder"):
        call_command("cost_report", "--team", "acme", "--entity", "alice-laptop", "--out", target)


def test_first_day_of_the_fixture_is_a_monday() -> None:
    assert FIRST.weekday() == 0


def test_answers_are_cached_until_an_event_of_the_window_arrives(expenses, load, monkeypatch):
    first = entity_routines(entity=expenses)
    patterns = entity_patterns(entity=expenses)

    def no_compile(**kwargs: Any) -> Any:
        raise AssertionError("compiled again although no event of the window changed")

    with monkeypatch.context() as patched:
        patched.setattr("aframes_web.activity.routines.day_compile_read", no_compile)
        assert entity_routines(entity=expenses) == first
        assert entity_patterns(entity=expenses) == patterns
    # A fifth expense on the last day of the window: recompiled, and the routine counts it.
    later = [
        {
            **r,
            "source_key": "again:" + r["source_key"],
            "occurred_at": r["occurred_at"].replace("T09:", "T11:"),
        }
        for r in expense_days(1, date(2026, 3, 5))
    ]
    load(expenses, later)
    assert _expense_routine(entity_routines(entity=expenses))["count"] == 5


def test_cost_report_of_an_entity_without_activity_says_nothing_recurs(tmp_path, desktop):
    call_command(
        "cost_report",
        "--team",
        "acme",
        "--entity",
        "alice-laptop",
        "--out",
        tmp_path,
        stderr=StringIO(),
    )
    cost = json.loads((tmp_path / "cost.json").read_text())
    assert cost["window"] == {"days": 0, "from": None, "to": None}
    markdown = (tmp_path / "cost.md").read_text()
    assert "0 days with desktop activity, — to —" in markdown
    assert markdown.count("No routine recurs at least 3 times in this window.") == 2
    assert "hold-out: too few days" in markdown
