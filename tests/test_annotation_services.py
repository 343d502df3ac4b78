"""The annotation workbench's rules (ProactMem §4.2): projects and assignment, the queue in
stream order, the episode rule, auto-final and adjudication with history, cross-review,
reassignment, import and export, and scoring a run against a project's final labels."""

from __future__ import annotations

import json
from typing import Any

import pytest

from aframes_web.annotation import selectors as sel
from aframes_web.annotation import services
from aframes_web.annotation.models import Assignment, Label, Task, Verdict
from aframes_web.annotation.services import LabelInput, ProjectSpec, WorkbenchError
from aframes_web.teams.models import Role
from benchmark.reference import parse_labels
from tests.workbench import person

pytestmark = pytest.mark.django_db

INTERVENE = LabelInput("intervene", "check_in_routine", new_episode="breakfast")
ABSTAIN = LabelInput("abstain")


def make(team: Any, **given: Any) -> Any:
    spec = ProjectSpec(**{"name": "p", "scope": "home", "labels_per_point": 2, **given})
    return services.project_create(team=team, spec=spec, build=False)


def first(project: Any, user: Any) -> Task:
    found = sel.current_task(project, user)
    assert found is not None
    return found


def label_all(project: Any, user: Any, given: LabelInput = ABSTAIN) -> None:
    while (task := sel.current_task(project, user)) is not None:
        services.label_submit(task=task, user=user, given=given)


def test_a_project_holds_every_point_and_spreads_streams_over_the_least_loaded(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team)
    points = {e.key: e.decision_points.count() for e in homes}
    assert sel.project_counts(project)["points"] == sum(points.values())
    load: dict[str, int] = {}
    for stream in project.streams.select_related("entity"):
        places = list(stream.assignments.values_list("annotator__username", flat=True))
        assert len(set(places)) == 2  # two independent labels per point
        assert stream.points == points[stream.entity.key]
        seqs = list(stream.tasks.values_list("seq", flat=True))
        assert seqs == list(range(1, stream.points + 1))
        for who in places:
            load[who] = load.get(who, 0) + stream.points
    # Four places over three annotators: nobody gets both streams while another has none.
    assert sorted(load) == ["ana", "ben", "cy"]
    assert max(load.values()) <= points["home-2"] + points["home-1"]
    assert min(load.values()) >= points["home-1"]


def test_a_time_range_keeps_only_its_points(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    points = list(homes[1].decision_points.order_by("at"))
    project = make(team, entities=["home-2"], starts_at=points[5].at, ends_at=points[9].at)
    assert list(project.tasks.order_by("seq").values_list("point_id", flat=True)) == [
        p.pk for p in points[5:9]
    ]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"scope": "garden"}, "unknown scope"),
        ({"name": " "}, "name the project"),
        ({"labels_per_point": 4}, "need 4 annotators; team acme has 3"),
        ({"labels_per_point": 0}, "labels per point must be 1 to 10"),
        ({"entities": ["nobody"]}, "no home entity nobody"),
        ({"review_percent": 101}, "percentage"),
        ({"triage": "llm"}, "LLM triage needs"),
    ],
)
def test_a_project_that_cannot_work_is_refused_with_a_reason(
    team: Any, people: dict[str, Any], homes: list[Any], given: dict[str, Any], message: str
) -> None:
    with pytest.raises(WorkbenchError, match=message):
        make(team, **given)
    assert not team.label_projects.exists()


def test_no_points_in_the_range_and_a_duplicate_name_are_refused(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    from datetime import UTC, datetime

    late = datetime(2030, 1, 1, tzinfo=UTC)
    with pytest.raises(WorkbenchError, match="no decision points fall in this time range"):
        make(team, starts_at=late)
    assert not team.label_projects.exists()
    make(team)
    with pytest.raises(WorkbenchError, match="already has a project named 'p'"):
        make(team)


def test_an_annotator_labels_a_stream_in_order_and_resumes_where_they_left_off(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team, entities=["home-1"])
    ana = people["ana"]
    task = first(project, ana)
    assert task.seq == 1
    later = Task.objects.get(stream=task.stream, seq=3)
    with pytest.raises(WorkbenchError, match="label this stream in order: point 1"):
        services.label_submit(task=later, user=ana, given=ABSTAIN)
    services.label_submit(task=task, user=ana, given=ABSTAIN)
    assert first(project, ana).seq == 2
    # Revising an earlier label is allowed and does not count twice.
    services.label_submit(task=task, user=ana, given=ABSTAIN)
    assert Task.objects.get(pk=task.pk).submitted == 1
    assert sel.progress_of(project, ana).done == 1
    # Somebody without the stream has nothing to label in it.
    with pytest.raises(WorkbenchError, match="not in your queue"):
        services.label_submit(task=task, user=people["adi"], given=ABSTAIN)


def test_the_episode_rule(team: Any, people: dict[str, Any], homes: list[Any]) -> None:
    project = make(team, entities=["home-1"])
    ana, ben = people["ana"], people["ben"]
    t1 = first(project, ana)
    for given, message in [
        (LabelInput("maybe"), "choose intervene or abstain"),
        (LabelInput("intervene", new_episode="x"), "names the service"),
        (LabelInput("intervene", "check_in_routine"), "names its episode"),
        (LabelInput("intervene", "review_nudge", new_episode="x"), "not a home service"),
        (LabelInput("abstain", "check_device"), "abstain label names no service"),
        (LabelInput("intervene", "check_device", new_episode="x" * 121), "at most 120"),
    ]:
        with pytest.raises(WorkbenchError, match=message):
            services.label_submit(task=t1, user=ana, given=given)
    assert not Label.objects.filter(submitted_at__isnull=False).exists()
    services.label_submit(task=t1, user=ana, given=INTERVENE)
    episode = Label.objects.get(task=t1, annotator=ana).episode
    assert episode is not None and episode.name == "breakfast"
    t2 = first(project, ana)
    # A later window the episode already covers is abstain...
    again = LabelInput("intervene", "check_in_routine", episode=episode.pk)
    with pytest.raises(WorkbenchError, match="was served at point 1.*tick reopens"):
        services.label_submit(task=t2, user=ana, given=again)
    services.label_submit(task=t2, user=ana, given=LabelInput("abstain", episode=episode.pk))
    # ...until the opportunity reopens.
    t3 = first(project, ana)
    reopened = LabelInput("intervene", "check_in_routine", episode=episode.pk, reopens=True)
    services.label_submit(task=t3, user=ana, given=reopened)
    assert Label.objects.get(task=t3, annotator=ana).reopens
    # Another annotator's episode is not theirs to use.
    with pytest.raises(WorkbenchError, match="not one of yours"):
        services.label_submit(
            task=first(project, ben),
            user=ben,
            given=LabelInput("intervene", "check_in_routine", episode=episode.pk),
        )
    names = [e["name"] for e in sel.own_episodes(t3, ana)]
    assert names == ["breakfast"] and sel.own_episodes(t3, ben) == []


def test_agreeing_labels_finalise_and_disagreeing_ones_wait_for_an_adjudicator(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team, entities=["home-1"])
    on_stream = set(
        Assignment.objects.filter(stream__project=project).values_list(
            "annotator__username", flat=True
        )
    )
    first_two = [people[n] for n in sorted(on_stream)]
    ana, ben = first_two
    t1 = first(project, ana)
    services.label_submit(task=t1, user=ana, given=ABSTAIN)
    assert Task.objects.get(pk=t1.pk).final is None  # one label of two
    services.label_submit(task=t1, user=ben, given=ABSTAIN)
    final = Task.objects.get(pk=t1.pk).final
    assert final is not None and final.kind == Verdict.Kind.AUTO and final.decision == "abstain"
    with pytest.raises(WorkbenchError, match="final label already"):
        services.label_submit(task=t1, user=ana, given=INTERVENE)

    t2 = first(project, ana)
    services.label_submit(task=t2, user=ana, given=INTERVENE)
    services.label_submit(task=t2, user=ben, given=ABSTAIN)
    assert list(sel.adjudication_queue(project)) == [t2]
    # Same decision, different service: still a disagreement.
    t3 = first(project, ana)
    services.label_submit(
        task=t3, user=ana, given=LabelInput("intervene", "check_device", new_episode="door")
    )
    services.label_submit(task=t3, user=ben, given=INTERVENE)
    assert [t.pk for t in sel.adjudication_queue(project)] == [t2.pk, t3.pk]

    adi = people["adi"]
    with pytest.raises(WorkbenchError, match="names a home service"):
        services.adjudicate(task=t2, user=adi, decision="intervene", service="nope")
    services.adjudicate(
        task=t2, user=adi, decision="intervene", service="check_in_routine", note="late start"
    )
    assert [t.pk for t in sel.adjudication_queue(project)] == [t3.pk]
    services.reopen(task=Task.objects.get(pk=t2.pk), user=adi, note="second look")
    assert [t.pk for t in sel.adjudication_queue(project)] == [t2.pk, t3.pk]
    services.adjudicate(task=t2, user=adi, decision="abstain")
    history = [(v.kind, v.decision, v.by) for v in sel.verdicts_of(t2)]
    assert history == [
        ("adjudicated", "intervene", adi),
        ("reopened", "", adi),
        ("adjudicated", "abstain", adi),
    ]
    # An auto-final point can be reopened too, and an unlabelled one cannot be settled.
    services.reopen(task=t1, user=adi)
    assert t1.pk in {t.pk for t in sel.adjudication_queue(project)}
    untouched = Task.objects.filter(project=project, submitted=0).first()
    with pytest.raises(WorkbenchError, match="nobody has labelled"):
        services.adjudicate(task=untouched, user=adi, decision="abstain")


def test_cross_review_flags_reach_the_annotator_and_send_the_point_to_adjudication(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team, entities=["home-1"], review_percent=100)
    ana, ben = (
        people[n]
        for n in sorted(
            Assignment.objects.filter(stream__project=project).values_list(
                "annotator__username", flat=True
            )
        )
    )
    outsider_annotator = next(
        u for n, u in people.items() if n in ("ana", "ben", "cy") and u not in (ana, ben)
    )
    t1 = first(project, ana)
    services.label_submit(task=t1, user=ana, given=ABSTAIN)
    services.label_submit(task=t1, user=ben, given=ABSTAIN)
    assert Task.objects.get(pk=t1.pk).final is not None
    label = Label.objects.get(task=t1, annotator=ana)
    assert label.sampled
    # Own labels, and labels of a stream one labels, are not theirs to review.
    for who in (ana, ben):
        with pytest.raises(WorkbenchError, match="cannot review"):
            services.review_submit(label=label, user=who, verdict="agree")
        assert label not in sel.review_queue(project, who)
    assert label in sel.review_queue(project, outsider_annotator)
    with pytest.raises(WorkbenchError, match="say in a comment"):
        services.review_submit(label=label, user=people["adi"], verdict="flag")
    services.review_submit(
        label=label, user=people["adi"], verdict="flag", comment="kitchen was late"
    )
    task = Task.objects.get(pk=t1.pk)
    assert task.flagged and task.final is None
    assert task in sel.adjudication_queue(project)
    flags = list(sel.own_flags(project, ana))
    assert [f.comment for f in flags] == ["kitchen was late"]
    assert list(sel.own_flags(project, ben)) == []
    assert label not in sel.review_queue(project, people["adi"])  # reviewed already


def test_a_place_handed_to_another_annotator_continues_where_it_stopped(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team, entities=["home-1"])
    stream = project.streams.get()
    on = set(stream.assignments.values_list("annotator__username", flat=True))
    leaving = people[sorted(on)[0]]
    arriving = people[next(n for n in ("ana", "ben", "cy") if n not in on)]
    for _ in range(2):
        services.label_submit(task=first(project, leaving), user=leaving, given=ABSTAIN)
    services.draft_save(task=first(project, leaving), user=leaving, form={"decision": "abstain"})
    with pytest.raises(WorkbenchError, match="not an annotator"):
        services.reassign(stream=stream, annotator=leaving, to=people["adi"])
    services.reassign(stream=stream, annotator=leaving, to=arriving)
    assert first(project, arriving).seq == 3
    assert sel.current_task(project, leaving) is None
    assert Label.objects.filter(annotator=leaving, submitted_at__isnull=False).count() == 2
    assert not Label.objects.filter(annotator=leaving, submitted_at__isnull=True).exists()
    assert sel.progress_of(project, arriving).done == 2  # the place's work so far
    with pytest.raises(WorkbenchError, match="already labels this stream"):
        services.reassign(stream=stream, annotator=arriving, to=people[sorted(on)[1]])


def test_drafts_are_kept_until_the_label_is_submitted(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team, entities=["home-1"])
    ana = people[sorted(Assignment.objects.values_list("annotator__username", flat=True))[0]]
    task = first(project, ana)
    services.draft_save(
        task=task, user=ana, form={"decision": "intervene", "rationale": "hm", "csrf": "x"}
    )
    label = Label.objects.get(task=task, annotator=ana)
    assert label.draft == {"decision": "intervene", "rationale": "hm"}
    assert label.submitted_at is None and Task.objects.get(pk=task.pk).submitted == 0
    assert first(project, ana).pk == task.pk  # a draft is not a label
    services.label_submit(task=task, user=ana, given=ABSTAIN)
    assert Label.objects.get(pk=label.pk).draft == {}


def finish(project: Any, people: dict[str, Any]) -> None:
    """Both annotators of each stream label everything: abstain, except intervene at the
    stream's second point for one of them (a disagreement there)."""
    for place in Assignment.objects.filter(stream__project=project).order_by("id"):
        user = place.annotator
        while (task := sel.current_task(project, user)) is not None:
            odd = task.seq == 2 and place.pk % 2 == 0
            services.label_submit(task=task, user=user, given=INTERVENE if odd else ABSTAIN)


def test_export_holds_final_labels_with_provenance_and_reads_back(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team, entities=["home-1"])
    finish(project, people)
    waiting = list(sel.adjudication_queue(project))
    assert len(waiting) == 1
    services.adjudicate(
        task=waiting[0],
        user=people["adi"],
        decision="intervene",
        service="check_in_routine",
        episode="breakfast",
        note="kitchen late",
    )
    lines = list(sel.export_jsonl(project))
    assert len(lines) == project.tasks.count()
    rows = [json.loads(line) for line in lines]
    settled = next(r for r in rows if r["provenance"]["final"] == "adjudicated")
    assert settled["label"] == "intervene" and settled["service"] == "check_in_routine"
    assert settled["provenance"]["adjudicator"] == "adi"
    assert len(settled["provenance"]["annotators"]) == 2
    assert settled["valid_until"] > settled["at"]
    auto = next(r for r in rows if r["provenance"]["final"] == "auto")
    assert auto["provenance"]["adjudicator"] is None and auto["valid_until"] is None
    parsed = parse_labels(lines, "export", "x")
    assert parsed[("home-1", settled["point"])].service == "check_in_routine"
    csv = "".join(sel.export_csv(project)).splitlines()
    assert csv[0].startswith("entity,point,at,label,service")
    assert len(csv) == 1 + len(rows)


def test_import_is_all_or_nothing(team: Any, people: dict[str, Any], homes: list[Any]) -> None:
    project = make(team, entities=["home-1"])
    point = project.tasks.order_by("seq").first().point
    good = json.dumps(
        {
            "entity": "home-1",
            "point": point.key,
            "label": "intervene",
            "service": "check_device",
            "provenance": {"annotators": ["x"], "adjudicator": "y"},
        }
    )
    stranger = json.dumps({"entity": "home-2", "point": point.key, "label": "abstain"})
    with pytest.raises(WorkbenchError, match="outside this project, the first home-2"):
        services.labels_import(project=project, lines=[good, stranger], name="f", user=None)
    with pytest.raises(WorkbenchError, match="f:2: label must be intervene or abstain"):
        services.labels_import(
            project=project,
            lines=[good, '{"entity": "home-1", "point": "p", "label": "no"}'],
            name="f",
            user=None,
        )
    with pytest.raises(WorkbenchError, match="holds no labels"):
        services.labels_import(project=project, lines=["\n"], name="f", user=None)
    assert not Verdict.objects.exists()
    assert services.labels_import(project=project, lines=[good], name="f", user=None) == 1
    final = project.tasks.get(point=point).final
    assert final.kind == "imported" and final.service == "check_device"
    assert final.provenance == {"annotators": ["x"], "adjudicator": "y"}
    row = json.loads(next(iter(sel.export_jsonl(project))))
    assert row["provenance"]["imported"] == {"annotators": ["x"], "adjudicator": "y"}


def test_triage_orders_streams_by_likely_points_and_never_labels(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team, triage="rule")
    streams = list(project.streams.select_related("entity").order_by("position"))
    shares = [s.screened / s.points for s in streams]
    assert shares == sorted(shares, reverse=True)
    assert sum(s.screened for s in streams) == project.tasks.filter(screened=True).count()
    assert not Label.objects.exists() and not Verdict.objects.exists()


def test_a_run_scores_against_a_projects_final_labels(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    from aframes_web.proactivestream.services import RunConfigError, run_create, run_execute

    project = make(team, entities=["home-1"])
    with pytest.raises(RunConfigError, match="no final labels yet"):
        run_create(
            team=team,
            scope="home",
            methods=["event_only"],
            labels=f"project:{project.pk}",
            entities=["home-1"],
            enqueue=False,
        )
    with pytest.raises(RunConfigError, match="no labelling project 999"):
        run_create(
            team=team, scope="home", methods=["event_only"], labels="project:999", enqueue=False
        )
    finish(project, people)
    run = run_create(
        team=team,
        scope="home",
        methods=["event_only"],
        labels=f"project:{project.pk}",
        entities=["home-1"],
        enqueue=False,
    )
    done = run_execute(run_id=run.pk)
    assert done is not None and done.status == "done"
    stream = done.results["streams"][0]
    assert stream["labels"] == f"project:{project.pk}"
    scored = project.tasks.filter(final__isnull=False).count()
    figures = done.results["scopes"]["home"]["event_only"]
    assert sum(figures[k] for k in ("tp", "fp", "fn", "tn")) <= scored
    assert figures["unlabelled"] == project.tasks.count() - scored


def test_an_annotator_role_is_needed_to_be_assigned(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    person(team, "dora", Role.VIEWER)
    project = make(team, labels_per_point=3)
    names = set(
        Assignment.objects.filter(stream__project=project).values_list(
            "annotator__username", flat=True
        )
    )
    assert names == {"ana", "ben", "cy"}
