"""The part of ``make bench-annotation`` (``perf.annotation``) that runs inside Django, once
that module has set it up on its scratch PostgreSQL database."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse

from aframes_web.annotation import services
from aframes_web.annotation.models import Label, Task, Verdict
from aframes_web.annotation.selectors import agreement, current_task
from aframes_web.proactivestream.models import DecisionPoint
from aframes_web.streams.services import entity_create, events_ingest
from aframes_web.teams.models import Role, Team
from aframes_web.teams.services import member_add

SEGMENT = timedelta(minutes=50)
START = datetime(2023, 1, 2, tzinfo=UTC)
ROOMS = ("kitchen", "hall", "bedroom", "living", "bath")


def build(points: int, prelabelled: int) -> Any:

    team = Team.objects.get(slug="bench")
    users = []
    for name in ("ann", "bob", "cat"):
        user = get_user_model().objects.create(username=name)
        member_add(team=team, user=user, role=Role.ANNOTATOR)
        users.append(user)
    entity = entity_create(team=team, key="home-synthetic", scope="home", timezone_name="UTC")
    rng = random.Random(7)
    began = time.perf_counter()
    batch: list[dict[str, Any]] = []
    for n in range(points):
        at = START + n * SEGMENT
        for k in range(3):
            room = rng.choice(ROOMS)
            batch.append(
                {
                    "occurred_at": (at + timedelta(minutes=10 + 12 * k)).isoformat(),
                    "kind": "observation",
                    "source_key": f"m:{n}:{k}",
                    "payload": {
                        "type": "motion",
                        "value": "ON",
                        "attributes": {"sensor": f"M-{room}", "room": room},
                    },
                }
            )
        if len(batch) >= 6000:
            events_ingest(entity=entity, items=batch)
            batch = []
    if batch:
        events_ingest(entity=entity, items=batch)
    DecisionPoint.objects.bulk_create(
        [
            DecisionPoint(
                entity=entity,
                key=f"home:{n:05d}",
                at=START + (n + 1) * SEGMENT,
                public={
                    "type": "home_segment",
                    "segment": n % 28,
                    "start": (START + n * SEGMENT).strftime("%H:%M"),
                    "end": (START + (n + 1) * SEGMENT).strftime("%H:%M"),
                    "day": (START + n * SEGMENT).date().isoformat(),
                    "events": 3,
                    "rooms": {"kitchen": 3},
                    "room_sequence": ["kitchen"],
                    "devices": [],
                    "on_at_close": [],
                },
                builder="bench",
            )
            for n in range(points)
        ],
        batch_size=5000,
    )
    print(
        f"stream: {points:,} points, {3 * points:,} events in {time.perf_counter() - began:.0f} s"
    )
    spec = services.ProjectSpec(name="bench", scope="home", labels_per_point=3)
    project = services.project_create(team=team, spec=spec, build=False)
    places = {p.annotator_id: p for p in project.streams.get().assignments.all()}
    tasks = list(Task.objects.filter(project=project, seq__lte=prelabelled).order_by("seq"))
    now = datetime.now(UTC)
    labels = []
    agreeing = []
    for task in tasks:
        truth = "intervene" if rng.random() < 0.1 else "abstain"
        chosen = []
        for user in users:
            decision = truth if rng.random() < 0.9 else rng.choice(("intervene", "abstain"))
            chosen.append(decision)
            labels.append(
                Label(
                    task=task,
                    annotator=user,
                    place=places[user.pk],
                    decision=decision,
                    service="check_device" if decision == "intervene" else "",
                    submitted_at=now,
                )
            )
        task.submitted = 3
        if len(set(chosen)) == 1:
            agreeing.append((task, chosen[0]))
    Label.objects.bulk_create(labels, batch_size=5000)
    verdicts = Verdict.objects.bulk_create(
        [
            Verdict(
                task=t,
                kind=Verdict.Kind.AUTO,
                decision=d,
                service="check_device" if d == "intervene" else "",
                at=now,
            )
            for t, d in agreeing
        ],
        batch_size=5000,
    )
    for (task, _), verdict in zip(agreeing, verdicts, strict=True):
        task.final = verdict
    Task.objects.bulk_update(tasks, ["submitted", "final"], batch_size=5000)
    print(f"pre-labelled: {len(labels):,} labels on {len(tasks):,} points, {len(agreeing):,} final")
    return project, users


def measure(project: Any, users: list[Any], rounds: int) -> tuple[list[float], list[float]]:

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    clients = {}
    for user in users:
        clients[user.pk] = Client()
        clients[user.pk].force_login(user)
    page_ms: list[float] = []
    submit_ms: list[float] = []
    rng = random.Random(11)
    slug = project.team.slug
    for n in range(rounds):
        for user in users:
            task = current_task(project, user)
            if task is None:
                raise SystemExit(f"{user} ran out of points after {n} rounds")
            path = reverse("dashboard:annotate", args=[slug, project.pk, task.pk])
            client = clients[user.pk]
            began = time.perf_counter()
            response = client.get(path)
            page_ms.append(1000 * (time.perf_counter() - began))
            if response.status_code != 200:
                raise SystemExit(f"GET {path}: {response.status_code}")
            form: dict[str, str] = {"decision": "abstain"}
            if rng.random() < 0.1:
                form = {
                    "decision": "intervene",
                    "service": "check_device",
                    "new_episode": f"door {task.seq}",
                }
            began = time.perf_counter()
            response = client.post(path, form)
            submit_ms.append(1000 * (time.perf_counter() - began))
            if response.status_code != 302:
                raise SystemExit(f"POST {path}: {response.status_code} {response.content[:300]!r}")
    return page_ms, submit_ms


def run(
    points: int, prelabelled: int, rounds: int
) -> tuple[list[float], list[float], list[float], Any]:
    """Build the project, measure the annotator's page and submissions, then time the
    agreement of the whole project three times."""
    project, users = build(points, prelabelled)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    page_ms, submit_ms = measure(project, users, rounds)
    runs = []
    for _ in range(3):
        began = time.perf_counter()
        report = agreement(project)
        runs.append(time.perf_counter() - began)
    connection.close()
    return page_ms, submit_ms, runs, report
