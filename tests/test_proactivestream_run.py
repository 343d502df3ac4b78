"""ProactiveStream runs end to end: the command, the stored run, its REST and dashboard pages,
and the permissions (owner, member, outsider)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from aframes_web.proactivestream.models import BenchmarkRun, RunArtefact, RunOutcome
from aframes_web.proactivestream.services import run_create, run_execute
from aframes_web.streams.selectors import entity_get
from aframes_web.streams.services import entity_create
from benchmark.run import CURVE_THRESHOLDS
from memory.services.deciding import policy_named
from tests import proactive_streams as data
from tests.conftest import need_service
from tests.test_proactivestream_service import _first_days

pytestmark = pytest.mark.django_db


@pytest.fixture
def home(team: Any, load: Any) -> Any:
    if not data.DATA.is_dir():
        need_service("shared data (../shared/data)", False)
    entity = entity_create(team=team, key="home-a", scope="home", timezone_name="Europe/Madrid")
    load(entity, _first_days(data.ordonez_items("A"), data.MADRID, 9))
    return entity


def _command(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("proactivestream", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def done_run(team: Any, home: Any, tmp_path: Path) -> BenchmarkRun:
    _command(
        "run", "--team", "acme", "--scope", "home", "--methods", "proactmem,event_only",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    return BenchmarkRun.objects.get()


def test_build_stores_points_and_says_how_many(team: Any, home: Any) -> None:
    out, _ = _command("build", "--team", "acme", "--scope", "home")
    assert out.startswith("home-a (home): 2")
    assert "new, 0 updated, 0 unchanged" in out
    again, _ = _command("build", "--team", "acme", "--scope", "home", "--entity", "home-a")
    assert "(0 new, 0 updated," in again


def test_run_writes_the_report_and_stores_the_run(done_run: BenchmarkRun, tmp_path: Path) -> None:
    out = tmp_path / "out"
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "metrics_home.png", "outcomes.jsonl", "results.json", "results.md", "streams.csv",
        "timeline_home.png",
    ]  # fmt: skip
    results = json.loads((out / "results.json").read_text())
    home = results["scopes"]["home"]
    assert set(home) == {"proactmem", "event_only"}
    for figures in home.values():
        for metric in (
            "relevance",
            "coverage",
            "effectiveness",
            "intrusion",
            "balance",
            "frequency",
        ):
            assert metric in figures and f"{metric}_ci" in figures
        assert figures["points"] == results["decision_points"]
    assert results["replay_points_per_s"]["home"] > 0
    [stream] = results["streams"]
    assert stream["entity"] == "home-a" and stream["labels"] == "labeler:home/2"
    assert stream["positives"] == sum(stream["opportunities"].values())
    md = (out / "results.md").read_text()
    assert "| proactmem |" in md and "| event_only |" in md
    assert (out / "metrics_home.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert done_run.status == "done" and done_run.results == results
    assert done_run.config["methods"] == ["proactmem", "event_only"]
    stored = set(RunArtefact.objects.filter(run=done_run).values_list("name", flat=True))
    assert stored == {
        "metrics_home.png",
        "timeline_home.png",
        "results.json",
        "results.md",
        "streams.csv",
    }
    outcomes = RunOutcome.objects.filter(run=done_run)
    assert outcomes.filter(outcome="FP").count() == sum(f["fp"] for f in home.values())
    assert outcomes.filter(outcome="FN").count() == sum(f["fn"] for f in home.values())


def test_a_run_scores_against_a_label_file_where_it_has_the_stream(
    team: Any, home: Any, tmp_path: Path
) -> None:
    _command("build", "--team", "acme", "--scope", "home")
    from aframes_web.proactivestream.models import DecisionPoint

    first = DecisionPoint.objects.filter(entity=home).order_by("at").first()
    labels = tmp_path / "labels.jsonl"
    provenance = {"annotators": ["ana", "ben"], "adjudicator": "cy"}
    rows = [
        {
            "entity": "home-a",
            "point": p.key,
            "label": "intervene" if p.pk == first.pk else "abstain",
            "service": "check_device" if p.pk == first.pk else None,
            "provenance": provenance,
        }
        for p in DecisionPoint.objects.filter(entity=home)
    ]
    labels.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out, _ = _command(
        "run", "--team", "acme", "--scope", "home", "--methods", "event_only",
        "--labels", f"jsonl:{labels}", "--out", str(tmp_path / "o"),
    )  # fmt: skip
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    [stream] = results["streams"]
    assert stream["labels"] == "jsonl:labels.jsonl" and stream["positives"] == 1
    assert "jsonl:labels.jsonl" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--team", "nope", "--scope", "home"], "no team 'nope'"),
        (["--team", "acme", "--scope", "garden"], "unknown scope 'garden'"),
        (["--team", "acme", "--scope", "sports"], "has no sports entities"),
        (["--team", "acme", "--scope", "home", "--methods", "oracle"], "unknown method 'oracle'"),
        (["--team", "acme", "--scope", "home", "--methods", "proactmem-llm"], "needs a model"),
        (["--team", "acme", "--scope", "home", "--entity", "nope"], "no home entity nope"),
        (["--team", "acme", "--scope", "home", "--labels", "jsonl:/nope.jsonl"], "no such file"),
        (["--team", "acme", "--scope", "home", "--labels", "oracle"], "use labeler"),
        (["--team", "acme", "--scope", "home", "--false-alarm-cost", "0"], "positive number"),
        (["--team", "acme", "--scope", "home", "--labels", "labeler@0"], "a number from 1"),
        (["--team", "acme", "--scope", "home", "--labels", "labeler@x"], "a number from 1"),
        (["--team", "acme", "--scope", "home", "--false-alarm-cost", "-2"], "positive number"),
    ],
)
def test_run_refuses_what_it_cannot_do_with_a_clear_message(
    team: Any, home: Any, tmp_path: Path, args: list[str], message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        _command("run", *args, "--out", str(tmp_path / "o"))
    assert not BenchmarkRun.objects.exists()


def test_a_bad_label_file_names_the_line(team: Any, home: Any, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"entity": "home-a", "point": "p", "label": "maybe"}\n')
    with pytest.raises(CommandError, match="labels.jsonl:1: label must be intervene or abstain"):
        _command(
            "run",
            "--team",
            "acme",
            "--scope",
            "home",
            "--labels",
            f"jsonl:{labels}",
            "--out",
            str(tmp_path),
        )


def test_a_failing_run_is_stored_failed_with_its_reason(
    team: Any, home: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aframes_web.proactivestream import services

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(services, "evaluate", boom)
    run = run_create(team=team, scope="home", methods=["event_only"], enqueue=False)
    with pytest.raises(RuntimeError):
        run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "failed" and run.error == "RuntimeError: the disk is full"
    assert run_execute(run_id=run.pk) == run  # a failed run is not run again by itself


# -- REST -------------------------------------------------------------------------------------


def test_rest_lists_and_shows_runs_of_the_team_only(
    done_run: BenchmarkRun, reader_api: Any, outsider_api: Any, make_client: Any, team: Any
) -> None:
    listed = reader_api.get("/api/v1/benchmark/runs").json()
    assert [r["id"] for r in listed["results"]] == [done_run.pk] and listed["next"] is None
    summary = listed["results"][0]
    assert summary["status"] == "done" and summary["progress"]["percent"] == 100
    detail = reader_api.get(f"/api/v1/benchmark/runs/{done_run.pk}").json()
    # One stream: the entity-level bootstrap has nothing to resample, so no interval.
    assert detail["results"]["scopes"]["home"]["proactmem"]["effectiveness_ci"] is None
    assert "metrics_home.png" in detail["files"] and detail["entities"] == ["home-a"]
    assert outsider_api.get("/api/v1/benchmark/runs").json()["results"] == []
    missing = outsider_api.get(f"/api/v1/benchmark/runs/{done_run.pk}")
    assert missing.status_code == 404 and "has no benchmark run" in missing.json()["detail"]
    writer = make_client(team, ["write"], "writer")
    assert writer.get("/api/v1/benchmark/runs").status_code == 403
    assert Client().get("/api/v1/benchmark/runs").status_code in (401, 403)
    bad = reader_api.get("/api/v1/benchmark/runs?status=maybe")
    assert bad.status_code == 400 and "status" in bad.json()["fields"]


# -- dashboard --------------------------------------------------------------------------------


def _signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_owner_starts_a_run_from_the_dashboard_and_reads_it(
    team: Any, home: Any, owner: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client = _signed_in(owner)
    page = client.get("/t/acme/benchmark/")
    assert page.status_code == 200 and b"Start the run" in page.content
    form = {"scope": "home", "methods": ["proactmem", "event_only"], "control": "on"}
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post("/t/acme/benchmark/", form)
    run = BenchmarkRun.objects.get()
    assert started.status_code == 302 and started["Location"] == f"/t/acme/benchmark/{run.pk}/"
    run.refresh_from_db()
    assert run.status == "done" and run.created_by == owner  # tasks run inline in tests
    shown = client.get(f"/t/acme/benchmark/{run.pk}/").content.decode()
    assert "effectiveness" in shown and "proactmem" in shown and "metrics_home.png" in shown
    polled = client.get(f"/t/acme/benchmark/{run.pk}/", headers={"HX-Request": "true"})
    assert polled["HX-Refresh"] == "true"  # done: the whole page shows the figures
    image = client.get(f"/t/acme/benchmark/{run.pk}/files/metrics_home.png")
    assert image["Content-Type"] == "image/png" and image.content[:4] == b"\x89PNG"
    csv_file = client.get(f"/t/acme/benchmark/{run.pk}/files/streams.csv")
    assert "attachment" in csv_file["Content-Disposition"]


def test_a_false_positive_opens_with_its_point_decision_and_label(
    done_run: BenchmarkRun, owner: Any
) -> None:
    client = _signed_in(owner)
    fp = RunOutcome.objects.filter(run=done_run, outcome="FP").first()
    assert fp is not None
    listing = client.get(f"/t/acme/benchmark/{done_run.pk}/outcomes/?method={fp.method}&outcome=FP")
    assert listing.status_code == 200 and fp.point_key in listing.content.decode()
    page = client.get(f"/t/acme/benchmark/{done_run.pk}/outcomes/{fp.pk}/").content.decode()
    assert "False positive of" in page and "The decision point" in page
    assert fp.decision["message"].split(" (")[0] in page
    assert "The reference label" in page and "labeler:home/2" in page
    assert "The labeler's written rule" in page
    # The point's private ground truth (hand-labelled activities) is never shown with it.
    assert "activity_first" not in page and "activity_at_close" not in page


def test_members_read_runs_outsiders_get_404_and_only_owners_start_runs(
    done_run: BenchmarkRun, member: Any, outsider: Any
) -> None:
    viewer = _signed_in(member)
    assert viewer.get(f"/t/acme/benchmark/{done_run.pk}/").status_code == 200
    assert b"Team owners can start runs" in viewer.get("/t/acme/benchmark/").content
    assert (
        viewer.post("/t/acme/benchmark/", {"scope": "home", "methods": ["event_only"]}).status_code
        == 403
    )
    stranger = _signed_in(outsider)
    for path in (
        "/t/acme/benchmark/",
        f"/t/acme/benchmark/{done_run.pk}/",
        f"/t/acme/benchmark/{done_run.pk}/outcomes/",
        f"/t/acme/benchmark/{done_run.pk}/files/results.md",
    ):
        assert stranger.get(path).status_code == 404, path


def test_a_run_with_a_curve_shows_proactmem_against_its_threshold(
    team: Any, home: Any, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    printed, _ = _command(
        "run", "--team", "acme", "--scope", "home", "--methods", "proactmem,event_only",
        "--false-alarm-cost", "4", "--curve", "--out", str(out),
    )  # fmt: skip
    run = BenchmarkRun.objects.get()
    assert run.config["false_alarm_cost"] == 4.0 and run.config["curve"] is True
    results = json.loads((out / "results.json").read_text())
    curve = results["threshold_curve"]["home"]
    assert [row["threshold"] for row in curve] == list(CURVE_THRESHOLDS)
    assert curve[0]["false_alarm_cost"] == 0.0 and curve[-1]["false_alarm_cost"] is None
    # The run's ProactMem acts from 4 / (1 + 4): its counts are the curve's at 0.8.
    [at_cost] = [row for row in curve if row["threshold"] == 0.8]
    assert at_cost["false_alarm_cost"] == 4.0
    mem = results["scopes"]["home"]["proactmem"]
    assert (at_cost["tp"], at_cost["fp"], at_cost["fn"]) == (mem["tp"], mem["fp"], mem["fn"])
    # Asking more of a score never adds an intervention.
    made = [row["tp"] + row["fp"] for row in curve]
    assert made == sorted(made, reverse=True)
    assert (out / "curve_home.png").read_bytes()[:4] == b"\x89PNG"
    assert "ProactMem against its score threshold" in printed
    assert RunArtefact.objects.filter(run=run, name="curve_home.png").exists()
    assert "timeliness" in mem and "on_time_share" in mem["timeliness"]


def test_an_owner_sets_what_a_false_alarm_costs_and_decisions_follow_it(
    team: Any, owner: Any, member: Any
) -> None:
    client = _signed_in(owner)
    page = client.get("/t/acme/").content.decode()
    assert "When ProactMem acts" in page and "It acts from <strong>0.50</strong>" in page
    saved = client.post("/t/acme/decisions/", {"false_alarm_cost": "3"}, follow=True)
    text = saved.content.decode()
    assert "acts on moments scored 0.75 or more" in text
    assert "It acts from <strong>0.75</strong>" in text
    team.refresh_from_db()
    assert team.false_alarm_cost == 3.0
    entity = entity_create(team=team, key="home-b", scope="home", timezone_name="Europe/Madrid")
    assert policy_named("rules", entity_get(team=team, key=entity.key)).threshold == 0.75
    # Out of range or not a number: said, and nothing changes.
    for bad in ("0", "1000", "many"):
        refused = client.post("/t/acme/decisions/", {"false_alarm_cost": bad}, follow=True)
        assert "Not saved:" in refused.content.decode()
        team.refresh_from_db()
        assert team.false_alarm_cost == 3.0
    # Empty: back to the default.
    client.post("/t/acme/decisions/", {"false_alarm_cost": ""})
    team.refresh_from_db()
    assert team.false_alarm_cost is None
    assert policy_named("rules", entity_get(team=team, key=entity.key)).threshold == 0.5
    # Only owners set it.
    assert (
        _signed_in(member).post("/t/acme/decisions/", {"false_alarm_cost": "2"}).status_code == 403
    )
    team.refresh_from_db()
    assert team.false_alarm_cost is None


def test_a_run_can_score_against_the_first_labels_and_says_which(
    team: Any, home: Any, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    _command(
        "run", "--team", "acme", "--scope", "home", "--methods", "event_only",
        "--labels", "labeler@1", "--out", str(out),
    )  # fmt: skip
    results = json.loads((out / "results.json").read_text())
    assert [row["labels"] for row in results["streams"]] == ["labeler:home/1"]
    assert "labeler:home/1" in (out / "results.md").read_text()


def test_the_progress_line_gives_a_rate_only_over_time_it_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The first report comes after a stream's first point: a rate from it alone would read
    # "1,000,000/s". The rate counts points since that report over the time since.
    from aframes_web.proactivestream.management.commands import proactivestream as command

    clock = iter([100.0, 100.0, 100.001, 102.001, 103.0, 103.0])
    monkeypatch.setattr(command.time, "monotonic", lambda: next(clock))
    out = StringIO()
    progress = command.StreamProgress(out)  # not a terminal: a line every five seconds
    progress("home-a", 1, 401)
    progress("home-a", 2, 401)  # 1 ms later: no line
    progress("home-a", 401, 401)  # the last, two seconds after the first
    progress("home-b", 1, 10)
    assert out.getvalue().splitlines() == [
        f"home-a: [{' ' * 30}] 1/401 points",
        f"home-a: [{'#' * 30}] 401/401 points  200/s",
        f"home-b: [{'###':<30}] 1/10 points",
    ]
