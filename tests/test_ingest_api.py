from __future__ import annotations

import gzip
import json
from datetime import date

import pytest
from django.test import override_settings

from aframes_web.streams import services
from aframes_web.streams.models import EntityDay, Event
from tests.conftest import need_service, snapshot

pytestmark = pytest.mark.django_db(transaction=True)
URL = "/api/v1/entities/alice-laptop/events"


def test_json_array_is_stored_and_answered_with_counts(owner_api, desktop) -> None:
    batch = [snapshot("2026-03-02T08:00:00Z", "s1"), snapshot("2026-03-02T08:00:05Z", "s2")]
    answer = owner_api.post(URL, batch)
    assert answer.status_code == 201
    assert answer.json() == {"accepted": 2, "duplicates": 0, "dropped_text_fields": 0}
    assert Event.objects.filter(entity=desktop).count() == 2


def test_same_batch_twice_is_stored_once(owner_api, desktop) -> None:
    batch = [snapshot("2026-03-02T08:00:00Z", "s1"), snapshot("2026-03-02T08:00:05Z")]
    owner_api.post(URL, batch)
    again = owner_api.post(URL, batch)
    assert again.status_code == 200
    assert again.json()["accepted"] == 0 and again.json()["duplicates"] == 2
    assert Event.objects.count() == 2


def test_repeated_key_inside_one_batch_counts_as_duplicate(owner_api, desktop) -> None:
    batch = [snapshot("2026-03-02T08:00:00Z", "s1"), snapshot("2026-03-02T08:00:09Z", "s1")]
    assert owner_api.post(URL, batch).json()["duplicates"] == 1
    assert Event.objects.get().occurred_at.second == 0


def test_a_repeated_key_with_other_content_is_named_in_the_answer(owner_api, desktop) -> None:
    same = snapshot("2026-03-02T08:00:00Z", "s2")
    batch = [
        snapshot("2026-03-02T08:00:00Z", "s1"),
        same,
        snapshot("2026-03-02T08:00:09Z", "s1"),  # other content: named
        dict(same),  # the same content again: an ordinary duplicate
    ]
    answer = owner_api.post(URL, batch).json()
    assert answer["accepted"] == 2 and answer["duplicates"] == 2
    assert answer["differing_repeats"] == [{"index": 2, "source_key": "s1", "kept_index": 0}]
    assert answer["differing_repeats_count"] == 1
    assert Event.objects.get(source_key="s1").occurred_at.second == 0
    # A batch without such repeats answers as before.
    plain = owner_api.post(URL, [snapshot("2026-03-02T08:01:00Z", "s3")]).json()
    assert "differing_repeats" not in plain


def test_batch_with_one_bad_item_stores_nothing_and_names_it(owner_api, desktop) -> None:
    batch = [
        snapshot("2026-03-02T08:00:00Z", "s1"),
        snapshot("2026-03-02T08:00:05", "s2"),
        {"occurred_at": "2026-03-02T08:00:07Z", "kind": "screenshot", "payload": {}},
    ]
    answer = owner_api.post(URL, batch)
    assert answer.status_code == 400
    body = answer.json()
    assert body["detail"] == "2 of 3 events are invalid; nothing was stored."
    assert [(e["index"], e["field"]) for e in body["errors"]] == [(1, "occurred_at"), (2, "kind")]
    assert Event.objects.count() == 0


def test_ndjson_and_gzip_bodies(owner_api, desktop) -> None:
    lines = (
        "\n".join(json.dumps(snapshot(f"2026-03-02T08:00:0{i}Z", f"n{i}")) for i in range(3))
        + "\n\n"
    )
    plain = owner_api.post(URL, lines, content_type="application/x-ndjson")
    assert plain.json()["accepted"] == 3
    packed = gzip.compress(json.dumps([snapshot("2026-03-02T09:00:00Z", "g1")]).encode())
    zipped = owner_api.post(URL, packed, headers={"Content-Encoding": "gzip"})
    assert zipped.status_code == 201 and zipped.json()["accepted"] == 1


def test_ndjson_line_that_is_not_json_is_named(owner_api, desktop) -> None:
    body = json.dumps(snapshot("2026-03-02T08:00:00Z", "a")) + "\n{oops\n"
    answer = owner_api.post(URL, body, content_type="application/x-ndjson")
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["index"] == 1
    assert "line 2 is not JSON" in answer.json()["errors"][0]["message"]
    assert Event.objects.count() == 0


def test_bodies_that_are_not_batches(owner_api, desktop) -> None:
    assert owner_api.post(URL, {"kind": "snapshot"}).status_code == 400
    assert owner_api.post(URL, "[{", content_type="application/json").status_code == 400
    assert owner_api.post(URL, "a,b", content_type="text/csv").status_code == 415
    broken = owner_api.post(URL, b"not gzip", headers={"Content-Encoding": "gzip"})
    assert broken.status_code == 400 and "not valid gzip" in broken.json()["detail"]


@override_settings(AFRAMES_MAX_BATCH_EVENTS=2)
def test_too_many_events_is_413_with_the_limit(owner_api, desktop) -> None:
    batch = [snapshot(f"2026-03-02T08:00:0{i}Z", f"k{i}") for i in range(3)]
    answer = owner_api.post(URL, batch)
    assert answer.status_code == 413 and "the limit is 2 per request" in answer.json()["detail"]
    ndjson = "\n".join(json.dumps(item) for item in batch)
    answer = owner_api.post(URL, ndjson, content_type="application/x-ndjson")
    assert answer.status_code == 413
    assert Event.objects.count() == 0


@override_settings(AFRAMES_MAX_BATCH_BYTES=2048)
def test_too_many_bytes_is_413_also_after_decompression(owner_api, desktop) -> None:
    batch = [snapshot(f"2026-03-02T08:00:{i:02d}Z", f"b{i}") for i in range(40)]
    big = owner_api.post(URL, batch)
    assert big.status_code == 413 and "2,048 bytes" in big.json()["detail"]
    bomb = gzip.compress(json.dumps(batch).encode())
    assert len(bomb) < 2048
    inflated = owner_api.post(URL, bomb, headers={"Content-Encoding": "gzip"})
    assert inflated.status_code == 413 and "decompressed" in inflated.json()["detail"]


def test_unknown_entity_and_other_teams_entity_are_404(owner_api, outsider_api, desktop) -> None:
    batch = [snapshot("2026-03-02T08:00:00Z", "s1")]
    unknown = owner_api.post("/api/v1/entities/nobody/events", batch)
    assert unknown.status_code == 404 and "has no entity 'nobody'" in unknown.json()["detail"]
    foreign = outsider_api.post(URL, batch)
    assert foreign.status_code == 404 and "Team 'globex' has no entity" in foreign.json()["detail"]
    assert Event.objects.count() == 0


def test_read_only_token_cannot_ingest(reader_api, desktop) -> None:
    assert reader_api.post(URL, [snapshot("2026-03-02T08:00:00Z")]).status_code == 403


def test_typed_text_is_dropped_and_counted_unless_team_opted_in(owner_api, desktop) -> None:
    typed = [
        {
            "occurred_at": "2026-03-02T08:00:00Z",
            "kind": "input",
            "source_key": "i1",
            "payload": {"type": "text", "text": "hunter2"},
        },
        {
            "occurred_at": "2026-03-02T08:00:01Z",
            "kind": "input",
            "source_key": "i2",
            "payload": {"type": "clipboard", "text": "copied"},
        },
    ]
    answer = owner_api.post(URL, typed)
    assert answer.json()["dropped_text_fields"] == 2
    assert all("text" not in e.payload for e in Event.objects.all())
    with override_settings(AFRAMES_STORE_INPUT_TEXT=True):
        kept = owner_api.post(URL, [{**typed[0], "source_key": "i3"}])
    assert kept.json()["dropped_text_fields"] == 0
    assert Event.objects.get(source_key="i3").payload["text"] == "hunter2"


def test_dispatch_receives_exactly_the_affected_local_days(owner_api, desktop, monkeypatch):
    seen: list[set] = []
    monkeypatch.setattr(services, "days_stored", lambda pairs: seen.append(set(pairs)))
    # Berlin is UTC+1 in March: 23:30Z is already the next local day.
    batch = [
        snapshot("2026-03-02T08:00:00Z", "a"),
        snapshot("2026-03-02T23:30:00Z", "b"),
        snapshot("2026-03-02T22:59:00Z", "c"),
    ]
    owner_api.post(URL, batch)
    assert seen == [{(desktop.pk, date(2026, 3, 2)), (desktop.pk, date(2026, 3, 3))}]
    # Only days that gained events are dispatched; a pure duplicate batch dispatches nothing.
    owner_api.post(URL, batch + [snapshot("2026-03-05T10:00:00Z", "d")])
    assert seen[1:] == [{(desktop.pk, date(2026, 3, 5))}]
    owner_api.post(URL, batch)
    assert len(seen) == 2


def test_failure_midway_leaves_no_partial_batch(owner_api, desktop, monkeypatch) -> None:
    real = services._insert_chunk
    calls = {"n": 0}

    def crash_on_second_chunk(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise ConnectionError("worker killed mid-insert")
        return real(*args, **kwargs)

    monkeypatch.setattr(services, "_insert_chunk", crash_on_second_chunk)
    monkeypatch.setitem(services._CHUNK_ROWS, "postgresql", 10)
    monkeypatch.setitem(services._CHUNK_ROWS, "sqlite", 10)
    batch = [snapshot(f"2026-03-02T08:00:{i:02d}Z", f"p{i}") for i in range(25)]
    with pytest.raises(ConnectionError):
        owner_api.post(URL, batch)
    assert calls["n"] == 2 and Event.objects.count() == 0


def test_day_summary_task_counts_each_local_day(owner_api, desktop) -> None:
    # CELERY_TASK_ALWAYS_EAGER is set for the test run, so the dispatched task runs inline.
    owner_api.post(
        URL,
        [
            snapshot("2026-03-02T08:00:00Z", "a"),
            snapshot("2026-03-02T09:00:00Z", "b"),
            snapshot("2026-03-02T23:30:00Z", "c"),
        ],
    )
    days = {d.day.isoformat(): d.event_count for d in EntityDay.objects.filter(entity=desktop)}
    assert days == {"2026-03-02": 2, "2026-03-03": 1}


KILLED_INGEST = """
import os, signal, sys
import django
django.setup()
from aframes_web.streams import services
from aframes_web.streams.models import Entity

real, calls = services._insert_chunk, []

def insert_then_die(*args, **kwargs):
    inserted = real(*args, **kwargs)
    calls.append(len(inserted))
    if len(calls) == 3:  # rows of three chunks are written inside the open transaction
        print(sum(calls), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    return inserted

services._insert_chunk = insert_then_die
services._CHUNK_ROWS["postgresql"] = 1000  # three chunks for 3,000 rows
items = [{"occurred_at": f"2026-03-02T08:{i // 60:02d}:{i % 60:02d}Z", "kind": "snapshot",
          "source_key": f"k{i}", "payload": {"app": "A"}} for i in range(3000)]
services.events_ingest(entity=Entity.objects.get(pk=int(sys.argv[1])), items=items)
"""


def test_process_killed_mid_batch_leaves_nothing_on_postgres(desktop) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    from django.db import connection

    need_service("PostgreSQL (DATABASE_URL)", connection.vendor == "postgresql")
    db = connection.settings_dict
    env = dict(os.environ)
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    env["DATABASE_URL"] = (
        f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    )
    done = subprocess.run(
        [sys.executable, "-c", KILLED_INGEST, str(desktop.pk)],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    assert int(done.stdout.strip()) == 3000  # all rows were written before the kill...
    assert Event.objects.filter(entity=desktop).count() == 0  # ...and none survived it


def test_every_gzip_member_is_read_and_trailing_junk_is_refused(owner_api, desktop) -> None:
    def line(key: str) -> bytes:
        return (json.dumps(snapshot("2026-03-02T09:00:00Z", key)) + "\n").encode()

    ndjson = {"Content-Encoding": "gzip"}
    two = gzip.compress(line("m1")) + gzip.compress(line("m2"))
    answer = owner_api.post(URL, two, content_type="application/x-ndjson", headers=ndjson)
    assert answer.status_code == 201 and answer.json()["accepted"] == 2
    junk = gzip.compress(line("m3")) + b"trailing junk"
    refused = owner_api.post(URL, junk, content_type="application/x-ndjson", headers=ndjson)
    assert refused.status_code == 400 and "after its last member" in refused.json()["detail"]
    assert not Event.objects.filter(source_key="m3").exists()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_concurrent_overlapping_batches_all_succeed_on_postgresql(desktop) -> None:
    import random
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection as default_connection
    from django.db import connections

    need_service("PostgreSQL (DATABASE_URL)", default_connection.vendor == "postgresql")
    keys = [f"k{i:04d}" for i in range(4000)]

    def send(seed: int) -> int:
        shuffled = random.Random(seed).sample(keys, len(keys))
        items = [snapshot(f"2026-03-02T09:{i % 60:02d}:00Z", key) for i, key in enumerate(shuffled)]
        try:
            return services.events_ingest(entity=desktop, items=items).accepted
        finally:
            connections.close_all()

    with ThreadPoolExecutor(8) as pool:
        accepted = list(pool.map(send, range(16)))
    # Every batch answered (no deadlock), and every key was stored exactly once.
    assert sum(accepted) == len(keys)
    assert Event.objects.filter(entity=desktop).count() == len(keys)


def test_an_event_from_the_future_is_refused_beyond_the_tolerance(owner_api, desktop) -> None:
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    soon = snapshot((now + timedelta(hours=12)).isoformat(), "soon")  # a clock a little ahead
    far = snapshot("2150-06-01T08:00:00Z", "far")
    answer = owner_api.post(URL, [soon, far])
    assert answer.status_code == 400
    [error] = answer.json()["errors"]
    assert (error["index"], error["field"]) == (1, "occurred_at")
    assert "past the latest moment this server takes" in error["message"]
    assert "AFRAMES_FUTURE_TOLERANCE_H" in error["message"]
    assert Event.objects.count() == 0
    assert owner_api.post(URL, [soon]).status_code == 201
    with override_settings(AFRAMES_FUTURE_TOLERANCE_H=0):
        late = owner_api.post(URL, [snapshot((now + timedelta(hours=2)).isoformat(), "late")])
        assert late.status_code == 400 and "1 h past" in late.json()["errors"][0]["message"]
