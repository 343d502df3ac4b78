"""The import form says beforehand what each format needs, and an error keeps what was chosen,
the file included."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from aframes_web.dashboard.held_uploads import held_dir
from aframes_web.streams.models import ImportJob
from aframes_web.teams.models import Role
from aframes_web.teams.services import member_add, user_get_or_create
from tests.conftest import signed_in

pytestmark = pytest.mark.django_db


CASAS = b"2010-11-04 00:03:50.209589 M003 ON\n2010-11-04 00:03:57.399391 M003 OFF\n"


@pytest.fixture(autouse=True)
def own_var_dir(settings: Any, tmp_path: Any) -> None:
    settings.VAR_DIR = tmp_path


def test_the_form_says_which_formats_need_a_time_zone_before_anything_is_sent(owner) -> None:
    page = signed_in(owner).get("/t/acme/import/").content.decode()
    casas = page.split('data-format="casas"', 1)[1].split("</div>", 1)[0]
    assert "Needs a time zone" in casas
    jsonl = page.split('data-format="jsonl"', 1)[1].split("</div>", 1)[0]
    assert "no time zone needed" in jsonl
    assert "Needed for casas, fitbit, ordonez" in page


def test_a_missing_time_zone_keeps_the_file_and_the_fields_for_the_next_try(owner) -> None:
    client = signed_in(owner)
    first = client.post(
        "/t/acme/import/",
        {
            "format": "casas",
            "entity": "flat-1",
            "file": SimpleUploadedFile("flat.txt", CASAS),
        },
    )
    page = first.content.decode()
    assert first.status_code == 200 and not ImportJob.objects.exists()
    assert "casas files write local times without an offset: name the zone" in page
    assert 'value="flat-1"' in page and '<option value="casas" selected>' in page
    assert "Kept from your last try: <strong>flat.txt</strong>" in page
    token = page.split('name="held" value="', 1)[1].split('"', 1)[0]
    assert len(list(held_dir().iterdir())) == 1
    second = client.post(
        "/t/acme/import/",
        {"format": "casas", "entity": "flat-1", "timezone": "America/Los_Angeles", "held": token},
    )
    job = ImportJob.objects.get()
    assert second.status_code == 302 and second["Location"] == f"/t/acme/import/{job.pk}/"
    assert job.original_name == "flat.txt" and job.size_bytes == len(CASAS)
    assert job.timezone == "America/Los_Angeles"
    assert not any(held_dir().iterdir())  # the import has its own copy now


def test_a_held_file_is_only_for_the_person_who_chose_it(team, owner) -> None:
    first = signed_in(owner).post(
        "/t/acme/import/",
        {"format": "casas", "entity": "flat-1", "file": SimpleUploadedFile("flat.txt", CASAS)},
    )
    token = first.content.decode().split('name="held" value="', 1)[1].split('"', 1)[0]
    other = user_get_or_create(username="otto", password="other-owner-1")
    member_add(team=team, user=other, role=Role.OWNER)
    answer = signed_in(other).post(
        "/t/acme/import/",
        {"format": "casas", "entity": "flat-1", "timezone": "Europe/Paris", "held": token},
    )
    assert answer.status_code == 200 and not ImportJob.objects.exists()
    assert "Choose the file to import." in answer.content.decode()
    for forged in ("not-a-token", token[:-2] + "xx"):
        page = signed_in(owner).post(
            "/t/acme/import/",
            {"format": "casas", "entity": "flat-1", "timezone": "Europe/Paris", "held": forged},
        )
        assert "Choose the file to import." in page.content.decode()
    assert not ImportJob.objects.exists()


def test_a_multi_entity_import_links_every_entity_it_made_a_page_at_a_time(team, owner) -> None:
    from aframes_web.streams.services import entity_create

    keys = [f"casas:hh{n:03d}" for n in range(60)]
    for key in keys:
        entity_create(team=team, key=key, scope="home")
    job = ImportJob.objects.create(
        team=team,
        format="casas",
        entity_key="casas",
        original_name="homes.zip",
        stored_path="",
        status=ImportJob.Status.DONE,
        summary={"entities": dict.fromkeys(keys, 10)},
    )
    client = signed_in(owner)
    page = client.get(f"/t/acme/import/{job.pk}/").content.decode()
    assert "Entities imported (60)" in page
    for key in keys[:50]:
        assert f'href="/t/acme/e/{key}/"' in page
    assert f'href="/t/acme/e/{keys[50]}/"' not in page and "page=2" in page
    second = client.get(f"/t/acme/import/{job.pk}/?page=2").content.decode()
    assert all(f'href="/t/acme/e/{key}/"' in second for key in keys[50:])
    listing = client.get("/t/acme/import/").content.decode()
    assert 'href="/t/acme/?q=casas%3A#entities-h"' in listing and "(60 entities)" in listing
    found = client.get("/t/acme/?q=casas%3A").content.decode()
    assert "60 matches" in found


def test_recent_imports_link_a_single_entity_import_to_its_entity(team, owner) -> None:
    from aframes_web.streams.services import entity_create

    entity_create(team=team, key="laptop", scope="desktop")
    job = ImportJob.objects.create(
        team=team, format="jsonl", entity_key="laptop", original_name="day.jsonl", stored_path=""
    )
    client = signed_in(owner)
    assert (
        '<a href="/t/acme/e/laptop/"><code>laptop</code></a>'
        in client.get("/t/acme/import/").content.decode()
    )
    assert 'href="/t/acme/e/laptop/"' in client.get(f"/t/acme/import/{job.pk}/").content.decode()
