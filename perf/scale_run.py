"""The Django part of ``make bench-scale`` (``perf.scale``): a year of one entity, then a team of
many, through the product's services, inside the Django that module set up on its scratch
PostgreSQL database."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse

from aframes_web.activity.services import compiles_pending_run
from aframes_web.celery import app
from aframes_web.streams.services import entity_create, entity_days_refresh, events_ingest
from aframes_web.teams.models import Membership, Role, Team
from benchmark.synthetic.memory_streams import ZONES, generate, local_day
from memory import selectors
from memory.services import closing
from memory.services.deciding import memory_decide

Item = dict[str, Any]
EVENT_TABLES = ("streams_event", "streams_entityday")
Progress = Callable[[str], None]


@dataclass
class Window:
    """What one entity costs with ``history_days`` closed days behind it (one decided day)."""

    history_days: int
    day: date
    close_ms: list[float]  # the closes of the days just before (close per entity-day)
    decision_ms: list[float]  # stored latency of each decision of the day (request path)
    context_cold_ms: list[float]  # an agent's reads (agent_reads), each asked the first time
    context_warm_ms: list[float]  # the same asked again (a cached rendering where one is kept)
    page_ms: dict[str, list[float]]
    memory_bytes: int  # what the memory tables grew by for this entity so far
    event_bytes: int  # what the events table grew by for this entity so far


@dataclass
class Grown:
    scope: str
    key: str
    days: int
    ingest_s: float
    closes: list[tuple[int, float]] = field(default_factory=list)  # (closed days before, ms)
    windows: list[Window] = field(default_factory=list)


@dataclass
class Team100:
    entities: int
    build_s: float
    page_ms: dict[str, list[float]]


@contextmanager
def timed_closes(found: list[tuple[int, date, float]]) -> Iterator[None]:
    """Every day close run while inside, timed: (entity id, day, ms). ``memory_close_due``
    calls ``memory_close_day`` through its module, which this wraps."""
    real = closing.memory_close_day

    def timed(*, entity_id: int, day: date) -> Any:
        began = time.perf_counter()
        out = real(entity_id=entity_id, day=day)
        if out is not None:
            found.append((entity_id, day, 1000 * (time.perf_counter() - began)))
        return out

    closing.memory_close_day = timed  # type: ignore[assignment]
    try:
        yield
    finally:
        closing.memory_close_day = real  # type: ignore[assignment]


def _by_day(items: Sequence[Item], scope: str) -> dict[date, list[Item]]:
    out: dict[date, list[Item]] = {}
    for item in items:
        out.setdefault(local_day(item, scope), []).append(item)
    return out


def _ms(call: Callable[[], Any]) -> float:
    began = time.perf_counter()
    call()
    return 1000 * (time.perf_counter() - began)


def _get(client: Client, path: str) -> None:
    response = client.get(path)
    if response.status_code != 200:
        raise SystemExit(f"GET {path} answered {response.status_code}: {response.content[:300]!r}")
    if getattr(response, "streaming", False):
        b"".join(response.streaming_content)


def vacuum() -> None:
    """VACUUM ANALYZE: table sizes as they settle (not mid-insert free space), and the
    planner's statistics as autovacuum keeps them in production, so nothing is timed on a
    day's fresh rows the planner has not seen."""
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def table_bytes(tables: Sequence[str]) -> int:
    """The tables' size on disk with their indexes (after :func:`vacuum`). An entity's share
    is the growth while only it is written."""
    with connection.cursor() as cursor:
        total = 0
        for table in tables:
            cursor.execute("SELECT pg_total_relation_size(%s)", [table])
            total += int(cursor.fetchone()[0])
    return total


def _timed(client: Client, paths: dict[str, str], rounds: int) -> dict[str, list[float]]:
    """Each page of ``paths`` asked ``rounds`` times in turn: its times in ms, by name."""
    found: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(rounds):
        for name, path in paths.items():
            found[name].append(_ms(lambda path=path: _get(client, path)))
    return found


def _pages(client: Client, team: str, key: str, day: date, rounds: int) -> dict[str, list[float]]:
    paths = {
        "team": reverse("dashboard:team", args=[team]),
        "calendar": reverse("dashboard:entity", args=[team, key]),
        "day": reverse("dashboard:day", args=[team, key, day]),
        "memory": reverse("dashboard:memory", args=[team, key]),
    }
    return _timed(client, paths, rounds)


def agent_reads(entity: Any, day: date) -> list[str]:
    """What an agent reads of the entity's present over REST: a desktop's context, an 8-hour
    window ending at each hour of the day's second half; a home's (no compiled context) stored
    trajectory of each of the twelve days before (those closed), then its regularities."""
    base = f"/api/v1/entities/{entity.key}"
    if entity.scope == "desktop":
        zone = ZoneInfo(entity.timezone)
        midnight = datetime.combine(day, datetime.min.time(), tzinfo=zone)
        return [
            f"{base}/context?hours=8&at={quote((midnight + timedelta(hours=h)).isoformat())}"
            for h in range(12, 24)
        ]
    closed = selectors.closed_days(entity)
    days = [d for d in (day - timedelta(days=n) for n in range(12, 0, -1)) if d in closed]
    return [*(f"{base}/trajectories/{d.isoformat()}" for d in days), f"{base}/regularities"]


def grow(
    team: Team,
    browser: Client,
    token: str,
    scope: str,
    *,
    days: int,
    start: date,
    seed: int,
    at: Sequence[int],
    decide_max: int,
    rounds: int,
    memory_tables: Sequence[str],
    progress: Progress,
) -> Grown:
    """One entity of ``scope`` grown day by day to ``days`` closed days; at each history length
    in ``at``, the next day is measured (decisions, context, pages, bytes)."""
    zone = ZoneInfo(ZONES[scope])
    items = generate(scope, days=days + 1, seed=seed, start=start)
    by_day = _by_day(items, scope)
    key = f"scale-{scope}"
    vacuum()
    before = (table_bytes(memory_tables), table_bytes(EVENT_TABLES))
    entity = entity_create(team=team, key=key, scope=scope, timezone_name=zone.key)
    grown = Grown(scope, key, days, 0.0)
    closes: list[tuple[int, date, float]] = []
    began = time.perf_counter()
    ordered = sorted(by_day)
    app.conf.task_always_eager = True  # summaries, compiles and closes run as a worker would
    with timed_closes(closes):
        for number, day in enumerate(ordered):
            todays = by_day[day]
            if number in at:
                grown.windows.append(
                    _measure(
                        entity,
                        browser,
                        token,
                        team.slug,
                        day,
                        todays,
                        number,
                        closes,
                        decide_max,
                        rounds,
                        memory_tables,
                        before,
                    )
                )
                progress(f"    {scope}: measured after {number} days")
            else:
                events_ingest(entity=entity, items=todays)
            if number and number % 60 == 0:
                progress(
                    f"    {scope}: {number} of {len(ordered)} days "
                    f"({time.perf_counter() - began:.0f} s)"
                )
    grown.ingest_s = time.perf_counter() - began
    first = min(ordered)
    grown.closes = [((d - first).days, ms) for e, d, ms in closes if e == entity.pk]
    return grown


def _measure(
    entity: Any,
    browser: Client,
    token: str,
    team: str,
    day: date,
    todays: list[Item],
    history: int,
    closes: list[tuple[int, date, float]],
    decide_max: int,
    rounds: int,
    memory_tables: Sequence[str],
    before: tuple[int, int],
) -> Window:
    # The day's first event moves the stream past the history (its last day closes, eagerly),
    # then its next events are decided one by one on the request path only (maintenance
    # queued, as bench-memory does), then the rest arrive by plain ingestion.
    events_ingest(entity=entity, items=todays[:1])
    vacuum()
    app.conf.task_always_eager = False
    latency = []
    for item in todays[1 : 1 + decide_max]:
        latency.append(
            float(memory_decide(entity=entity, item=item, policy="rules").decision.latency_ms)
        )
    app.conf.task_always_eager = True
    events_ingest(entity=entity, items=todays[1 + decide_max :])
    # What the decisions queued (the day's summary, its compile) ran nowhere: done here, as a
    # worker would have, so the day closes in its turn.
    entity_days_refresh(entity_id=entity.pk, days=[day.isoformat()])
    compiles_pending_run(entity=entity)
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    paths = agent_reads(entity, day)
    cold = [_ms(lambda p=p: _get(agent, p)) for p in paths]
    warm = [_ms(lambda p=p: _get(agent, p)) for p in paths]
    vacuum()  # before the sizes and the pages
    memory_bytes = table_bytes(memory_tables) - before[0]
    event_bytes = table_bytes(EVENT_TABLES) - before[1]
    pages = _pages(browser, team, entity.key, day - timedelta(days=1), rounds)
    recent = [ms for e, d, ms in closes if e == entity.pk and d < day][-7:]
    return Window(history, day, recent, latency, cold, warm, pages, memory_bytes, event_bytes)


def team_of(
    team: Team, browser: Client, entities: int, *, start: date, seed: int, rounds: int,
    progress: Progress,
) -> Team100:  # fmt: skip
    """The team grown to ``entities`` home entities (three days each, the first two closed), then
    its page of entities, first and second (fifty to a page)."""
    have = team.entities.count()
    items = generate("home", days=3, seed=seed, start=start)
    by_day = _by_day(items, "home")
    began = time.perf_counter()
    app.conf.task_always_eager = True
    for number in range(have, entities):
        entity = entity_create(
            team=team, key=f"home-{number:03d}", scope="home", timezone_name=ZONES["home"]
        )
        for day in sorted(by_day):
            events_ingest(entity=entity, items=by_day[day])
        if number % 20 == 0:
            progress(f"    team: {number} of {entities} entities")
    build_s = time.perf_counter() - began
    vacuum()
    paths = {
        "team": reverse("dashboard:team", args=[team.slug]),
        "team_page_2": reverse("dashboard:team", args=[team.slug]) + "?page=2",
    }
    return Team100(team.entities.count(), build_s, _timed(browser, paths, rounds))


def browser_for(team: Team) -> Client:
    """A logged-in owner of ``team`` (the dashboard's pages)."""
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    user = get_user_model().objects.create_user("scale-owner", password=None)
    Membership.objects.create(team=team, user=user, role=Role.OWNER)
    client = Client()
    client.force_login(user)
    return client
