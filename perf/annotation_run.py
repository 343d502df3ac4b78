"""The part of ``make bench-annotation`` (``perf.annotation``) that runs inside Django, once
that module has set it up on its scratch PostgreSQL database."""

from __future__ import annotations

import random
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

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
) -> tuple[list[float], list[float], list[float], Any, Any, list[Any]]:
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
    return page_ms, submit_ms, runs, report, project, users


# Every STEP-th point of the real home is measured: about 60 points over Ordóñez B's 21 days.
STEP = 10


def real_home(team: Any, users: list[Any]) -> dict[str, Any] | None:
    """The workbench on a real home (Ordóñez B, ``../shared/data``): one annotator labels the
    whole stream in order while the page of every STEP-th point is timed (with its 14-day
    baseline; with 28 days; with the history of the point's day as a range); how many page
    loads show a person the point, what is on at its close and a 28-day baseline; and the
    look-ahead walk (``perf.lookahead``) for a second annotator halfway through. None where
    the data is not there."""
    from aframes_web.annotation.selectors import current_task
    from aframes_web.annotation.services import LabelInput, ProjectSpec, project_create
    from aframes_web.mcp import tools
    from aframes_web.proactivestream.services import points_build
    from aframes_web.streams.models import Event
    from aframes_web.teams.auth import Principal
    from aframes_web.teams.services import token_create
    from perf import lookahead
    from perf.real import ORDONEZ, ordonez_items

    if not ORDONEZ.exists():
        return None
    entity = entity_create(team=team, key="ordonez-b", scope="home", timezone_name="Europe/Madrid")
    events_ingest(entity=entity, items=ordonez_items("B"))
    points_build(entity=entity)
    project = project_create(
        team=team, spec=ProjectSpec(name="Ordonez B", scope="home", entities=["ordonez-b"])
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    first, second = users[0], users[1]
    client = Client()
    client.force_login(first)
    slug = team.slug
    page_ms: list[float] = []
    page28_ms: list[float] = []
    range_ms: list[float] = []
    judged: list[int] = []
    n = 0
    while (task := current_task(project, first)) is not None:
        path = reverse("dashboard:annotate", args=[slug, project.pk, task.pk])
        if n % STEP == 0:
            close = task.point.at.astimezone(ZoneInfo(entity.timezone))
            day = close.strftime("%Y-%m-%dT00:00")
            for timed, query in (
                (page_ms, ""),
                (page28_ms, "?baseline=28"),
                (range_ms, f"?hfrom={day}&hto={close:%Y-%m-%dT%H:%M}"),
            ):
                began = time.perf_counter()
                response = client.get(path + query)
                timed.append(1000 * (time.perf_counter() - began))
                if response.status_code != 200:
                    raise SystemExit(f"GET {path}{query}: {response.status_code}")
            judged.append(_requests_to_judge(client, slug, project.pk))
        services.label_submit(task=task, user=first, given=LabelInput(decision="abstain"))
        n += 1
    tasks = list(Task.objects.filter(project=project, stream__assignments__annotator=second))
    tasks.sort(key=lambda t: t.seq)
    for task in tasks[: len(tasks) // 2]:
        services.label_submit(task=task, user=second, given=LabelInput(decision="abstain"))
    current, later = tasks[len(tasks) // 2], tasks[-1]
    after = lookahead.plant(entity, current.point.at)
    browser = Client()
    browser.force_login(second)
    key = token_create(team=team, name="walk", scopes=["read", "label"], created_by=second).key
    api = _TokenClient(key)
    principal = Principal(team=team, scopes=frozenset({"read", "label"}), user=second)
    leaks, answered = lookahead.walk(
        browser=browser,
        api=api,
        mcp_next=lambda: tools.next_label_task(principal, project=project.pk),
        mcp_list=lambda: tools.list_entities(principal),
        team=slug,
        entity=entity.key,
        project=project.pk,
        current=current.pk,
        later=later.pk,
        after=after,
        day=current.point.at.astimezone(ZoneInfo(entity.timezone)).date().isoformat(),
    )
    days = Event.objects.filter(entity=entity).dates("occurred_at", "day").count()
    return {
        "step": STEP,
        "points": n,
        "days": days,
        "page_ms": page_ms,
        "page28_ms": page28_ms,
        "range_ms": range_ms,
        "requests_to_judge": max(judged),
        "lookahead_leaks": sum(len(v) for v in leaks.values()) + len(answered),
        "leaks": {**leaks, **{route: ["answered a later point"] for route in answered}},
    }


class _TokenClient:
    """Django's test client with a bearer token on every request."""

    def __init__(self, key: str) -> None:
        self.client = Client()
        self.headers = {"Authorization": f"Bearer {key}"}

    def get(self, path: str) -> Any:
        return self.client.get(path, headers=self.headers)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self.client.post(path, body, content_type="application/json", headers=self.headers)


def _requests_to_judge(client: Client, slug: str, project: int) -> int:
    """Page loads a person needs to see the point, what is on at its close and 28 days of the
    same hours, walking as an annotator does: the next point, then the 28-day baseline if the
    page shows fewer days."""
    response = client.get(reverse("dashboard:annotate_next", args=[slug, project]), follow=True)
    loads = 1
    text = response.content.decode()
    needed = ('id="point-words"', 'id="at-close"', 'id="baseline"')
    if not all(mark in text for mark in needed):
        raise SystemExit("the annotator page lacks the point, its close or its baseline")
    if "on the previous 28 days" not in text:
        link = re.search(r'href="([^"]*baseline=28)"', text)
        if link is None:
            raise SystemExit("the annotator page offers no 28-day baseline")
        base = response.request["PATH_INFO"]
        text = client.get(base + link.group(1).replace("&amp;", "&")).content.decode()
        loads += 1
        if "on the previous 28 days" not in text:
            raise SystemExit("the 28-day baseline did not show 28 days")
    return loads
