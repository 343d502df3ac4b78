"""Shared fixtures: three users in two teams, tokens, and the service guard for CI."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from aframes_web.streams.models import Entity
from aframes_web.streams.services import entity_create
from aframes_web.teams.models import Role
from aframes_web.teams.services import member_add, team_create, token_create, user_get_or_create
from memory.models import Regularity

REQUIRE_SERVICES = os.environ.get("AFRAMES_REQUIRE_SERVICES") == "1"
_skipped: list[str] = []


def need_service(name: str, available: bool) -> None:
    """Skip a test that needs a service we lack; under AFRAMES_REQUIRE_SERVICES=1, fail it."""
    if available:
        return
    if REQUIRE_SERVICES:
        pytest.fail(f"{name} is required (AFRAMES_REQUIRE_SERVICES=1) but not configured")
    pytest.skip(f"{name} not configured")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if REQUIRE_SERVICES and _skipped:
        print(f"\nAFRAMES_REQUIRE_SERVICES=1 but {len(_skipped)} test(s) were skipped:")
        for nodeid in _skipped:
            print(f"  {nodeid}")
        session.exitstatus = 1


@pytest.fixture(autouse=True, scope="session")
def compiler_index_apart(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The compiler's command line keeps an index of each ActivityWatch export it reads
    (compiler/sources/aw_index.py) in the user's cache folder: the suite's calls, in process
    and in child processes, keep theirs in a folder of the run's own."""
    before = os.environ.get("AFRAMES_CACHE_DIR")
    os.environ["AFRAMES_CACHE_DIR"] = str(tmp_path_factory.mktemp("aframes-cache"))
    yield
    if before is None:
        os.environ.pop("AFRAMES_CACHE_DIR", None)
    else:
        os.environ["AFRAMES_CACHE_DIR"] = before


@pytest.fixture(autouse=True)
def own_cache(settings: Any) -> None:
    """Each test counts requests in a cache of its own (a fresh key prefix on the configured
    backend): the file cache under var/ and Redis outlive a run, and token ids repeat from one
    test database to the next, so a throttle must never see another test's requests."""
    import uuid

    settings.CACHES = {
        alias: {**config, "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
        for alias, config in settings.CACHES.items()
    }


@pytest.fixture(autouse=True)
def eager_tasks() -> Any:
    """Tasks run inline unless a test starts a real worker (tests/test_celery_wiring.py)."""
    from aframes_web.celery import app

    # start_worker makes its app the current one; shared tasks must resolve to ours again.
    app.set_current()
    app.set_default()
    app.conf.task_always_eager = True
    yield app
    app.conf.task_always_eager = False


@pytest.fixture
def redis_worker(eager_tasks: Any) -> Iterator[Any]:
    """The Celery app, ready for a real worker on the test Redis, one such test at a time.

    Every real worker consumes the one ``celery`` queue on REDIS_URL. Under pytest-xdist two
    of them at once take each other's tasks and run them against the other process's test
    database, where the ids they carry name nothing. So a test that starts one holds a Redis
    lock across processes, and empties the queue of what earlier tests left there.
    """
    import redis
    from django.conf import settings

    need_service("Redis (REDIS_URL)", bool(settings.REDIS_URL))
    client = redis.Redis.from_url(settings.REDIS_URL)
    # A test with a real worker takes under two minutes; the expiry frees the lock if its
    # process dies holding it, and the wait outlasts one such test.
    lock = client.lock("aframes-tests:real-worker", timeout=600, blocking_timeout=600)
    if not lock.acquire():
        pytest.fail("another test process held the real-worker lock for 10 minutes")
    try:
        client.delete("celery")
        eager_tasks.conf.task_always_eager = False
        yield eager_tasks
    finally:
        lock.release()
        client.close()


class ApiClient:
    """The Django test client with a bearer token and JSON helpers."""

    def __init__(self, key: str | None) -> None:
        self.client = Client()
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}

    def get(self, path: str, **extra: Any) -> Any:
        return self.client.get(path, headers={**self.headers, **extra.pop("headers", {})}, **extra)

    def post(
        self,
        path: str,
        data: Any = None,
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> Any:
        import json

        body = data if isinstance(data, bytes | str) else json.dumps(data)
        return self.client.post(
            path,
            body,
            content_type=content_type,
            headers={**self.headers, **(headers or {})},
            **extra,
        )


@pytest.fixture
def team(db: Any) -> Any:
    return team_create(slug="acme", name="Acme")


@pytest.fixture
def other_team(db: Any) -> Any:
    return team_create(slug="globex", name="Globex")


@pytest.fixture
def owner(team: Any) -> Any:
    user = user_get_or_create(username="olivia", password="owner-pass-1")
    member_add(team=team, user=user, role=Role.OWNER)
    return user


@pytest.fixture
def member(team: Any) -> Any:
    user = user_get_or_create(username="mia", password="member-pass-1")
    member_add(team=team, user=user, role=Role.VIEWER)
    return user


@pytest.fixture
def outsider(other_team: Any) -> Any:
    user = user_get_or_create(username="oscar", password="outsider-pass-1")
    member_add(team=other_team, user=user, role=Role.OWNER)
    return user


@pytest.fixture
def make_client(db: Any) -> Callable[..., ApiClient]:
    def make(team: Any, scopes: list[str], name: str = "t") -> ApiClient:
        return ApiClient(token_create(team=team, name=name, scopes=scopes).key)

    return make


@pytest.fixture
def owner_api(team: Any, make_client: Callable[..., ApiClient]) -> ApiClient:
    return make_client(team, ["read", "write", "label", "admin"], "owner")


@pytest.fixture
def reader_api(team: Any, make_client: Callable[..., ApiClient]) -> ApiClient:
    return make_client(team, ["read"], "reader")


@pytest.fixture
def outsider_api(other_team: Any, make_client: Callable[..., ApiClient]) -> ApiClient:
    return make_client(other_team, ["read", "write", "label", "admin"], "outsider")


@pytest.fixture
def load(django_capture_on_commit_callbacks: Any) -> Callable[[Any, Any], None]:
    """Import records as ingestion does and run what it queues after commit (the compile)."""
    from aframes_web.streams.importers import SourceItem
    from aframes_web.streams.importing import import_items

    def run(entity: Any, records: Any) -> None:
        items = (SourceItem(f"t:{n}", item=r) for n, r in enumerate(records, 1))
        with django_capture_on_commit_callbacks(execute=True):
            import_items(entity=entity, items=items)

    return run


@pytest.fixture
def desktop(team: Any) -> Entity:
    return entity_create(
        team=team, key="alice-laptop", scope="desktop", timezone_name="Europe/Berlin"
    )


def signed_in(user: Any, **kwargs: Any) -> Client:
    """A test client signed in as ``user`` (``kwargs`` go to the Client)."""
    client = Client(**kwargs)
    client.force_login(user)
    return client


def page_text(page: Any) -> str:
    """The text of a page that must have answered 200."""
    assert page.status_code == 200, page.status_code
    return page.content.decode()


def snapshot(t: str, key: str | None = None, app: str = "Code", **payload: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "occurred_at": t,
        "kind": "snapshot",
        "payload": {"app": app, "window": "main.py", **payload},
    }
    if key is not None:
        item["source_key"] = key
    return item


def store_snapshot_by_hand(entity: Entity, event_id: int, at: str) -> None:
    """A snapshot event stored directly with a chosen id, as a late, out-of-order commit would
    land (no ingestion, so no compile is queued)."""
    from datetime import datetime

    from django.utils import timezone

    from aframes_web.streams.models import Event
    from aframes_web.streams.services import events_counted

    Event.objects.create(
        id=event_id,
        entity=entity,
        occurred_at=datetime.fromisoformat(at),
        kind="snapshot",
        source_key=f"late-{event_id}",
        monitor="0",
        payload={"app": "Late", "window": "w"},
        received_at=timezone.now(),
    )
    events_counted(entity.pk, 1)  # as every insert of the product counts it


# The annotation workbench's team and streams (tests/workbench.py), for every test module.
def regularity_states(entity: Entity) -> dict[str, int]:
    """The entity's stored regularities counted by state, from the rows themselves (what the
    day close's ``RegularityTally`` must equal)."""
    states = Regularity.objects.filter(entity=entity).values_list("state", flat=True)
    return dict(Counter(states))


from tests.workbench import homes, people  # noqa: E402, F401
