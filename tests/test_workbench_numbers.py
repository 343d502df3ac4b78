"""The numbers behind the guidelines' words: each service's rule with the number annotators
label by, the reference labeler's by default, set by a project's owners, shown beside the form
and in the API."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from aframes_web.annotation import services as workbench
from aframes_web.annotation.models import Assignment
from aframes_web.annotation.services import ProjectSpec
from aframes_web.teams.services import token_create
from benchmark.labelers import home
from benchmark.labelers.numbers import NUMBERS, check_numbers, numbers_for
from benchmark.streams.catalogue import service_ids
from tests.conftest import ApiClient


def test_every_service_has_its_number_in_its_sentence() -> None:
    for scope, specs in NUMBERS.items():
        assert tuple(s.service for s in specs) == service_ids(scope)
        for item in numbers_for(scope):
            assert f"{item['number']:g}" in item["sentence"], (scope, item["service"])
            assert "{" not in item["sentence"]
    # The defaults are the labeler's own constants, not copies.
    device = {n["service"]: n for n in numbers_for("home")}["check_device"]
    assert device["default"] == home.DEVICE_FLOOR.total_seconds() / 60 == 10


def test_a_project_number_replaces_the_default_in_the_words() -> None:
    (device,) = [n for n in numbers_for("home", {"check_device": 25}) if n["changed"]]
    assert "at least 25 minutes" in device["sentence"]
    assert device["default_words"] == "10 minutes, the reference labeler's"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"take_break": 5}, "not a home service"),
        ({"check_device": "ten"}, "a number of minutes"),
        ({"check_device": True}, "a number of minutes"),
        ({"check_device": -1}, "outside 0–10000"),
    ],
)
def test_numbers_that_cannot_be_are_refused_saying_why(given: dict, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        check_numbers("home", given)


@pytest.fixture
def numbered(team, people, homes) -> dict[str, Any]:
    project = workbench.project_create(
        team=team, spec=ProjectSpec(name="Numbers", scope="home", entities=["home-1"])
    )
    owner, ana = Client(), Client()
    owner.force_login(people["olivia"])
    place = Assignment.objects.filter(stream__project=project).first()
    ana.force_login(place.annotator)
    return {"project": project, "owner": owner, "ana": ana, "annotator": place.annotator}


def test_owners_set_a_number_and_annotators_label_by_it(numbered) -> None:
    project, owner, ana = numbered["project"], numbered["owner"], numbered["ana"]
    url = f"/t/acme/labels/{project.pk}/numbers/"
    page = owner.get(f"/t/acme/labels/{project.pk}/")
    assert b'id="numbers-form"' in page.content and b"at least 10 minutes" in page.content
    saved = owner.post(url, {"check_device": "25", "wellbeing_check": "", "check_in_routine": "60"})
    assert saved.status_code == 302
    project.refresh_from_db()
    # 60 is the default: dropped, so the project follows the labeler's number.
    assert project.numbers == {"check_device": 25.0}
    shown = ana.get(f"/t/acme/labels/{project.pk}/annotate/", follow=True).content.decode()
    assert "at least 25 minutes" in shown and "default 10 minutes" in shown
    assert "at least 45 minutes" in shown  # wellbeing_check kept its default


def test_a_bad_number_changes_nothing_and_says_why(numbered) -> None:
    project, owner, ana = numbered["project"], numbered["owner"], numbered["ana"]
    url = f"/t/acme/labels/{project.pk}/numbers/"
    for form, said in (
        ({"check_device": "soon"}, "not a number"),
        ({"check_device": "-5"}, "outside"),
    ):
        answer = owner.post(url, form, follow=True)
        assert said in answer.content.decode()
    assert ana.post(url, {"check_device": "25"}).status_code == 403
    project.refresh_from_db()
    assert project.numbers == {}


def test_the_api_gives_the_numbers_with_the_project(numbered, team) -> None:
    project = numbered["project"]
    workbench.numbers_set(project=project, given={"check_device": 15})
    key = token_create(team=team, name="r", scopes=["read"]).key
    record = ApiClient(key).get(f"/api/v1/labels/projects/{project.pk}").json()
    device = {n["service"]: n for n in record["numbers"]}["check_device"]
    assert device["number"] == 15 and device["default"] == 10
    assert "at least 15 minutes" in device["sentence"]
