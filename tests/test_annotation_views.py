"""The workbench's pages and REST API: who may do what (owner, adjudicator, annotator,
viewer, outsider), blindness in every view and response, and the flows end to end."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from aframes_web.annotation import selectors as sel
from aframes_web.annotation import services
from aframes_web.annotation.models import Assignment, Label, Task
from aframes_web.annotation.services import LabelInput, ProjectSpec
from aframes_web.teams.services import token_create
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

SECRET_RATIONALE = "ana-only-rationale-7731"


@pytest.fixture
def project(team: Any, people: dict[str, Any], homes: list[Any]) -> Any:
    spec = ProjectSpec(name="Homes", scope="home", entities=["home-1"], labels_per_point=2)
    return services.project_create(team=team, spec=spec, build=False)


def on_stream(project: Any, people: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The two annotators of the stream (alphabetical) and the one left out."""
    names = sorted(
        Assignment.objects.filter(stream__project=project).values_list(
            "annotator__username", flat=True
        )
    )
    spare = next(n for n in ("ana", "ben", "cy") if n not in names)
    return people[names[0]], people[names[1]], people[spare]


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def url(name: str, project: Any, *args: Any) -> str:
    return reverse(f"dashboard:{name}", args=[project.team.slug, project.pk, *args])


def test_outsiders_get_404_on_every_page(project: Any, outsider: Any) -> None:
    client = client_for(outsider)
    task = project.tasks.first()
    for path in (
        reverse("dashboard:label_projects", args=[project.team.slug]),
        url("label_project", project),
        url("annotate_next", project),
        url("annotate", project, task.pk),
        url("label_review", project),
        url("label_tasks", project),
        url("adjudicate", project, task.pk),
        url("label_agreement", project),
        url("label_export", project, "jsonl"),
    ):
        assert client.get(path).status_code == 404, path
    assert (
        client.post(url("annotate", project, task.pk), {"decision": "abstain"}).status_code == 404
    )


def test_each_role_reaches_what_it_may_and_is_told_why_not(
    project: Any, people: dict[str, Any]
) -> None:
    first, _, _ = on_stream(project, people)
    task = project.tasks.first()
    expect = {
        "olivia": {"label_project": 200, "label_agreement": 200, "label_tasks": 200,
                   "annotate_next": 403, "adjudicate": 200, "label_review": 200},
        "adi": {"label_project": 200, "label_agreement": 200, "label_tasks": 200,
                "annotate_next": 403, "adjudicate": 200, "label_review": 200},
        "mia": {"label_project": 200, "label_agreement": 200, "label_tasks": 200,
                "annotate_next": 403, "adjudicate": 403, "label_review": 403},
        first.get_username(): {"label_project": 200, "label_agreement": 403,
                               "label_tasks": 403, "annotate_next": 302, "adjudicate": 403,
                               "label_review": 200},
    }  # fmt: skip
    for who, pages in expect.items():
        client = client_for(people[who])
        for name, code in pages.items():
            args = (task.pk,) if name == "adjudicate" else ()
            response = client.get(url(name, project, *args))
            assert response.status_code == code, (who, name)
    # Only owners create projects or reassign.
    adi = client_for(people["adi"])
    new = {"name": "x", "scope": "home", "labels_per_point": 1, "triage": "none",
           "review_percent": 10}  # fmt: skip
    response = adi.post(reverse("dashboard:label_projects", args=[project.team.slug]), new)
    assert response.status_code == 403


def test_an_owner_creates_a_project_from_the_page(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    client = client_for(people["olivia"])
    path = reverse("dashboard:label_projects", args=[team.slug])
    page = client.get(path)
    assert b"New project" in page.content and b"ana, ben, cy" in page.content
    form = {"name": "Mornings", "scope": "home", "entities": "home-2, home-1",
            "labels_per_point": 3, "triage": "rule", "review_percent": 20}  # fmt: skip
    response = client.post(path, form)
    assert response.status_code == 302
    made = team.label_projects.get(name="Mornings")
    assert made.streams.count() == 2 and made.review_percent == 20
    assert "only the first reliable actionable window" in made.guidelines.lower().replace("**", "")
    form["name"] = "Too many"
    form["labels_per_point"] = 5
    refused = client.post(path, form)
    assert refused.status_code == 200
    assert b"need 5 annotators" in refused.content
    page = client.get(reverse("dashboard:label_project", args=[team.slug, made.pk]))
    assert b"<h4>The labelling rule" in page.content  # Markdown, under the page headings
    assert b"Screened likely" in page.content  # triage counts, for owners


def test_the_annotator_page_is_blind(project: Any, people: dict[str, Any]) -> None:
    first, second, spare = on_stream(project, people)
    task = sel.current_task(project, first)
    services.label_submit(
        task=task,
        user=first,
        given=LabelInput("intervene", "check_in_routine", new_episode="first-ep",
                         rationale=SECRET_RATIONALE),
    )  # fmt: skip
    client = client_for(second)
    page = client.get(url("annotate", project, task.pk))
    assert page.status_code == 200
    body = page.content.decode()
    assert SECRET_RATIONALE not in body and "first-ep" not in body
    assert "secret-label" not in body  # the events' private ground truth
    assert "private" not in body
    # No system output: no memory, regularity or decision of a method on the page.
    assert "/memory/" not in body and "regularit" not in body.lower()
    assert "/benchmark/" not in body and "intervention control" not in body
    assert "Point 1 of" in body and "The stream so far" in body
    # Nor can the second annotator open a point outside their queue or ahead of it.
    other = Task.objects.exclude(stream=task.stream).first()
    if other is not None:
        assert client.get(url("annotate", project, other.pk)).status_code == 404
    # The spare annotator, not on the stream, cannot open its points at all.
    assert client_for(spare).get(url("annotate", project, task.pk)).status_code == 404
    # The project page shows an annotator only their own streams and progress.
    overview = client.get(url("label_project", project)).content.decode()
    assert first.get_username() not in overview.split("Streams")[1].split("Guidelines")[0]


def test_history_never_shows_a_later_event(project: Any, people: dict[str, Any]) -> None:
    first, _, _ = on_stream(project, people)
    tasks = list(project.tasks.order_by("seq"))
    for task in tasks:
        events, _ = sel.history(task, 1)
        assert all(e.occurred_at <= task.at for e in events)
    busy = max(tasks, key=lambda t: len(sel.history(t, 1)[0]))
    events, _ = sel.history(busy, 1)
    assert events and [e.occurred_at for e in events] == sorted(
        (e.occurred_at for e in events), reverse=True
    )


def test_history_pages_back_in_fifties(project: Any, people: dict[str, Any]) -> None:
    from aframes_web.streams.services import events_ingest
    from tests import home_streams

    first, _, _ = on_stream(project, people)
    entity = project.streams.get().entity
    day = home_streams.START
    items = [home_streams.motion(day, 0, m % 50, "hall", n=100 + m) for m in range(120)]
    events_ingest(entity=entity, items=items)
    task = project.tasks.get(seq=2)  # 00:50–01:40: every one of those events is before it
    page1, older = sel.history(task, 1)
    page3, older3 = sel.history(task, 3)
    assert len(page1) == 50 and older and len(page3) == 20 and not older3
    # The annotator reaches point 2 once point 1 is labelled (no point ahead is shown).
    services.label_submit(
        task=project.tasks.get(seq=1), user=first, given=services.LabelInput(decision="abstain")
    )
    client = client_for(first)
    partial = client.get(
        url("annotate", project, task.pk) + "?hpage=3", headers={"HX-Request": "true"}
    )
    assert partial.status_code == 200 and b"the start of the stream" in partial.content
    assert b"<h1>" not in partial.content


def test_labelling_by_the_page_autosaves_then_submits_and_moves_on(
    project: Any, people: dict[str, Any]
) -> None:
    first, second, _ = on_stream(project, people)
    client = client_for(first)
    start = client.get(url("annotate_next", project))
    task = sel.current_task(project, first)
    assert start["Location"] == url("annotate", project, task.pk)
    saved = client.post(url("annotate_draft", project, task.pk), {"decision": "intervene",
                                                                  "rationale": "hm"})  # fmt: skip
    assert saved.status_code == 200 and b"Draft saved" in saved.content
    page = client.get(url("annotate", project, task.pk)).content.decode()
    assert 'value="intervene"' in page.split(" checked")[0][-200:]  # the draft comes back
    assert "\nhm</textarea>" in page
    refused = client.post(url("annotate", project, task.pk), {"decision": "intervene"})
    assert refused.status_code == 422
    assert b"names the service" in refused.content
    done = client.post(
        url("annotate", project, task.pk),
        {"decision": "intervene", "service": "check_in_routine", "new_episode": "breakfast"},
    )
    assert done.status_code == 302 and done["Location"] == url("annotate_next", project)
    label = Label.objects.get(task=task, annotator=first)
    assert label.submitted_at is not None and label.episode.name == "breakfast"
    # The second annotator's queue is untouched by the first one's work.
    assert sel.current_task(project, second).pk == task.pk


def test_a_finished_queue_says_so(project: Any, people: dict[str, Any]) -> None:
    first, _, _ = on_stream(project, people)
    while (task := sel.current_task(project, first)) is not None:
        services.label_submit(task=task, user=first, given=LabelInput("abstain"))
    page = client_for(first).get(url("annotate_next", project))
    assert page.status_code == 200 and b"Your queue is done" in page.content


def test_adjudication_review_agreement_and_export_pages(
    project: Any, people: dict[str, Any]
) -> None:
    first, second, spare = on_stream(project, people)
    intervene = LabelInput("intervene", "check_in_routine", new_episode="b", rationale="late")
    for user, given in ((first, intervene), (second, LabelInput("abstain", rationale="fine"))):
        services.label_submit(task=sel.current_task(project, user), user=user, given=given)
    task = project.tasks.get(seq=1)
    adi = client_for(people["adi"])
    queue = adi.get(url("adjudicate_next", project))
    assert queue["Location"] == url("adjudicate", project, task.pk)
    page = adi.get(queue["Location"]).content.decode()
    assert "late" in page and "fine" in page  # both rationales, side by side
    assert page.count('class="label-card"') == 2
    settled = adi.post(
        url("adjudicate", project, task.pk),
        {"action": "decide", "decision": "intervene", "service": "check_in_routine",
         "episode": "breakfast", "note": "kitchen at 10"},
    )  # fmt: skip
    assert settled.status_code == 302
    assert Task.objects.get(pk=task.pk).final.by == people["adi"]
    reopened = adi.post(url("adjudicate", project, task.pk), {"action": "reopen", "note": "?"})
    assert reopened.status_code == 302 and Task.objects.get(pk=task.pk).final is None
    adi.post(
        url("adjudicate", project, task.pk),
        {"action": "decide", "decision": "intervene", "service": "check_in_routine"},
    )
    history = adi.get(url("adjudicate", project, task.pk)).content.decode()
    assert history.count("by adi") >= 3
    agreement = adi.get(url("label_agreement", project)).content.decode()
    assert "Cohen" in agreement and "Krippendorff" in agreement and "heat" in agreement
    assert "Gwet's AC1" in agreement and "prevalence paradox" in agreement
    export = adi.get(url("label_export", project, "jsonl"))
    rows = [json.loads(line) for line in b"".join(export.streaming_content).splitlines()]
    assert rows[0]["provenance"]["adjudicator"] == "adi"
    assert sorted(rows[0]["provenance"]["annotators"]) == sorted(
        [first.get_username(), second.get_username()]
    )
    csv = b"".join(adi.get(url("label_export", project, "csv")).streaming_content)
    assert csv.startswith(b"entity,point,at,label")
    # The spare annotator reviews a sampled label of a stream they do not label.
    Label.objects.update(sampled=True)
    spare_client = client_for(spare)
    review = spare_client.get(url("label_review", project)).content.decode()
    assert "to review" in review and "Record" in review
    label_id = Label.objects.filter(task=task).order_by("id").first().pk
    flagged = spare_client.post(
        url("label_review", project), {"label": label_id, "verdict": "flag", "comment": "why?"}
    )
    assert flagged.status_code == 302
    mine = Label.objects.get(pk=label_id).annotator
    overview = client_for(mine).get(url("label_project", project)).content.decode()
    assert "Flags on your labels" in overview and "why?" in overview


def test_import_from_the_page_is_all_or_nothing(project: Any, people: dict[str, Any]) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    owner = client_for(people["olivia"])
    point = project.tasks.order_by("seq").first().point
    good = json.dumps({"entity": "home-1", "point": point.key, "label": "abstain"})
    bad = SimpleUploadedFile("l.jsonl", (good + "\nnot json\n").encode())
    response = owner.post(url("label_import", project), {"file": bad})
    assert "problem=" in response["Location"] and "not%20JSON" in response["Location"]
    assert not Task.objects.filter(final__isnull=False).exists()
    ok = SimpleUploadedFile("l.jsonl", good.encode())
    response = owner.post(url("label_import", project), {"file": ok})
    assert response["Location"].endswith("?imported=1")
    page = owner.get(response["Location"]).content.decode()
    assert "Imported 1 final label." in page


def label_client(team: Any, user: Any, name: str) -> ApiClient:
    return ApiClient(
        token_create(team=team, name=name, scopes=["read", "label"], created_by=user).key
    )


def test_the_rest_api_labels_blind_with_the_label_scope(
    team: Any, project: Any, people: dict[str, Any], reader_api: ApiClient
) -> None:
    first, second, _ = on_stream(project, people)
    one, two = label_client(team, first, "one"), label_client(team, second, "two")
    mine = one.get("/api/v1/labels/assignments").json()["results"]
    assert [a["stream"] for a in mine] == ["home-1"] and mine[0]["labelled"] == 0
    nxt = one.get(f"/api/v1/labels/projects/{project.pk}/next").json()
    assert nxt["seq"] == 1 and nxt["point"]["words"] and nxt["label"] is None
    task = nxt["task"]
    path = f"/api/v1/labels/projects/{project.pk}/tasks/{task}"
    bad = one.post(path, {"decision": "intervene"})
    assert bad.status_code == 422 and "names the service" in bad.json()["detail"]
    wrong = one.post(path, {"decision": "abstain", "episode": "x"})
    assert wrong.status_code == 400
    made = one.post(
        path,
        {"decision": "intervene", "service": "check_in_routine", "new_episode": "ep",
         "rationale": SECRET_RATIONALE},
    )  # fmt: skip
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["label"]["submitted"] and body["next_task"] != task
    assert body["episodes"][0]["name"] == "ep"
    # The other annotator's view of the same point holds nothing of the first one's label.
    theirs = two.get(path)
    assert theirs.status_code == 200
    text = theirs.content.decode()
    assert SECRET_RATIONALE not in text and '"ep"' not in text and theirs.json()["label"] is None
    assert "secret-label" not in text and "private" not in text
    # Scope and person checks.
    assert reader_api.get("/api/v1/labels/assignments").status_code == 403
    nobody = ApiClient(token_create(team=team, name="n", scopes=["label"]).key)
    refused = nobody.get("/api/v1/labels/assignments")
    assert refused.status_code == 403 and "acts for nobody" in refused.json()["detail"]
    viewer = label_client(team, people["mia"], "mia")
    assert "only annotators label" in viewer.get("/api/v1/labels/assignments").json()["detail"]
    assert reader_api.get(f"/api/v1/labels/projects/{project.pk}").json()["counts"]["labels"] == 1
    other_task = Task.objects.exclude(stream__assignments__annotator=first).first()
    if other_task is not None:
        assert (
            one.get(f"/api/v1/labels/projects/{project.pk}/tasks/{other_task.pk}").status_code
            == 404
        )


def test_the_rest_api_hides_other_teams_projects(
    project: Any, outsider_api: ApiClient, reader_api: ApiClient
) -> None:
    assert outsider_api.get(f"/api/v1/labels/projects/{project.pk}").status_code == 404
    assert outsider_api.get("/api/v1/labels/projects").json()["results"] == []
    listed = reader_api.get("/api/v1/labels/projects").json()["results"]
    assert [p["name"] for p in listed] == ["Homes"]
    export = reader_api.get(f"/api/v1/labels/projects/{project.pk}/export?as=xml")
    assert export.status_code == 400


def test_the_labeling_command_round_trip(
    team: Any, project: Any, people: dict[str, Any], tmp_path: Any
) -> None:
    from io import StringIO

    from django.core.management import call_command

    first, second, _ = on_stream(project, people)
    for user in (first, second):
        while (task := sel.current_task(project, user)) is not None:
            services.label_submit(task=task, user=user, given=LabelInput("abstain"))
    out = tmp_path / "labels.jsonl"
    call_command("labeling", "export", "--team", team.slug, "--project", str(project.pk),
                 "--out", str(out))  # fmt: skip
    lines = out.read_text().splitlines()
    assert len(lines) == project.tasks.count()
    text = StringIO()
    call_command("labeling", "agreement", "--team", team.slug, "--project", str(project.pk),
                 stdout=text)  # fmt: skip
    assert "raw agreement 1.000" in text.getvalue() and "Fleiss' kappa —" in text.getvalue()
    text = StringIO()
    call_command("labeling", "create", "--team", team.slug, "--name", "Again", "--scope", "home",
                 "--entity", "home-1", "--labels-per-point", "1", stdout=text)  # fmt: skip
    again = team.label_projects.get(name="Again")
    assert f"Project {again.pk} (Again)" in text.getvalue()
    text = StringIO()
    call_command("labeling", "import", "--team", team.slug, "--project", str(again.pk),
                 str(out), stdout=text)  # fmt: skip
    assert f"Imported {len(lines):,} final label(s)" in text.getvalue()
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no labelling project 999"):
        call_command("labeling", "export", "--team", team.slug, "--project", "999")


def test_create_token_for_a_member(team: Any, people: dict[str, Any]) -> None:
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    from aframes_web.teams.models import ApiToken

    out = StringIO()
    call_command("create_token", team.slug, "ana-labels", "--scopes", "read,label", "--user",
                 "ana", "--quiet", stdout=out)  # fmt: skip
    assert ApiToken.objects.get(name="ana-labels").created_by == people["ana"]
    key = out.getvalue().strip()
    assert ApiClient(key).get("/api/v1/labels/assignments").status_code == 200
    with pytest.raises(CommandError, match="'nobody' is no member of team acme"):
        call_command("create_token", team.slug, "x", "--user", "nobody")
