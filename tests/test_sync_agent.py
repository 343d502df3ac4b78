"""aframes-sync end to end against a live Aframes server (pytest-django's live_server)."""

from __future__ import annotations

import io
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from aframes_sync.__main__ import main
from aframes_sync.checkpoint import Checkpoint
from aframes_sync.source import ActivityWatchServerSource, ScreenpipeSource
from aframes_web.streams.models import Entity, Event
from aframes_web.streams.services import entity_create
from aframes_web.teams.services import token_create
from benchmark.synthetic.desktop import generate_day
from benchmark.synthetic.native import activitywatch_export, write_screenpipe
from compiler.entities import site_of
from compiler.sources import activitywatch
from compiler.sources.events import records_from_capture

pytestmark = pytest.mark.django_db(transaction=True)

DAY = date(2026, 3, 2)


def capture_db(tmp_path: Path, rows: int | None = None) -> Path:
    """A SYNTHETIC screenpipe-style database: one working day, or its first ``rows`` records."""
    records = generate_day(DAY, seed=7)
    path = tmp_path / "screenpipe.sqlite"
    write_screenpipe(path, records if rows is None else records[:rows])
    return path


def expected_keys(path: Path) -> set[str]:
    source = ScreenpipeSource(path)
    return {
        record["source_key"]
        for low, high in source.windows(None)
        for _t, record in source.records(low, high)
    }


def stored(entity: Entity) -> list[Event]:
    return list(Event.objects.filter(entity=entity))


@pytest.fixture
def laptop(team: Any) -> Entity:
    return entity_create(team=team, key="alice-laptop", scope="desktop", timezone_name="UTC")


@pytest.fixture
def sync(live_server: Any, team: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(
        "AFRAMES_TOKEN", token_create(team=team, name="agent", scopes=["read", "write"]).key
    )
    monkeypatch.delenv("AFRAMES_URL", raising=False)
    monkeypatch.delenv("AFRAMES_ENTITY", raising=False)
    checkpoint = tmp_path / "state" / "checkpoint.json"

    def run(
        db: Path | str,
        *args: str,
        url: str | None = None,
        entity: str = "alice-laptop",
        sleep: Any = None,
    ) -> Any:
        out, err = io.StringIO(), io.StringIO()
        argv = [
            "--source", db if isinstance(db, str) else f"screenpipe:{db}",
            "--entity", entity,
            "--url", url or live_server.url,
            "--checkpoint", str(checkpoint),
            "--retry-base", "0.01",
            *args,
        ]  # fmt: skip
        code = main(argv, out=out, err=err, **({"sleep": sleep} if sleep else {}))
        return code, out.getvalue(), err.getvalue()

    run.checkpoint = checkpoint  # type: ignore[attr-defined]
    return run


def test_once_sends_a_day_completely_and_a_second_pass_stores_nothing_new(
    sync: Any, laptop: Entity, tmp_path: Path
) -> None:
    db = capture_db(tmp_path)
    keys = expected_keys(db)
    code, out, err = sync(db, "--once")
    assert code == 0, err
    assert {e.source_key for e in stored(laptop)} == keys
    assert len(stored(laptop)) == len(keys)
    assert f"{len(keys)} accepted" in out
    assert json.loads(sync.checkpoint.read_text())["streams"]

    code, out, _ = sync(db, "--once")
    assert code == 0 and "0 accepted" in out
    assert len(stored(laptop)) == len(keys)

    sync.checkpoint.unlink()  # a lost checkpoint costs only duplicates, never a second copy
    code, out, _ = sync(db, "--once")
    assert code == 0 and f"0 accepted, {len(keys)} duplicates" in out
    assert len(stored(laptop)) == len(keys)


def test_resumes_after_a_stop_mid_sync_without_loss_or_duplicates(
    sync: Any, laptop: Entity, tmp_path: Path
) -> None:
    db = capture_db(tmp_path, rows=700)
    keys = expected_keys(db)
    code, out, _ = sync(db, "--batch-size", "100", "--max-batches", "2")
    assert code == 0 and "stopped after 2 batches" in out
    assert len(stored(laptop)) == 200

    code, out, err = sync(db, "--batch-size", "100")
    assert code == 0, err
    events = stored(laptop)
    assert {e.source_key for e in events} == keys and len(events) == len(keys)


def test_follow_picks_up_rows_the_recorder_adds_later(
    sync: Any, laptop: Entity, tmp_path: Path
) -> None:
    db = capture_db(tmp_path, rows=200)
    keys = expected_keys(db)
    polls: list[float] = []

    def poll(seconds: float) -> None:
        polls.append(seconds)
        if len(polls) == 2:
            raise KeyboardInterrupt  # the member stops the agent
        with sqlite3.connect(db) as recorder:
            recorder.execute(
                "INSERT INTO frames (id, timestamp, app_name, window_name, browser_url, focused,"
                " device_name) VALUES (9999, '2026-03-02T23:00:00.000000Z', 'Terminal', 'zsh',"
                " NULL, 1, 'monitor_0')"
            )
        recorder.close()

    code, out, err = sync(db, "--follow", "--interval", "7", sleep=poll)
    assert code == 0, err
    assert polls == [7.0, 7.0]
    assert {e.source_key for e in stored(laptop)} == keys | {"sp:s9999"}
    assert out.count("aframes-sync: sent") == 2


class FlakyProxy(ThreadingHTTPServer):
    """Forwards to the live server, except for the requests its plan names.

    ``drop``: the connection closes before the server sees the batch; ``lose``: the server
    stores it, then the answer is lost; ``503``: an overloaded server.
    """

    def __init__(self, target: str, plan: dict[int, str]) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.target = target
        self.plan = plan
        self.count = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _ProxyHandler(BaseHTTPRequestHandler):
    server: FlakyProxy

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fate = self.server.plan.get(self.server.count)
        self.server.count += 1
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if fate == "drop":
            self.close_connection = True
            return
        if fate == "503":
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        request = urllib.request.Request(
            self.server.target + self.path,
            data=body,
            method="POST",
            headers={k: self.headers[k] for k in ("Authorization", "Content-Type")},
        )
        try:
            with urllib.request.urlopen(request) as response:
                status, answer = response.status, response.read()
        except urllib.error.HTTPError as refused:
            status, answer = refused.code, refused.read()
        if fate == "lose":
            self.close_connection = True
            return
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


@pytest.fixture
def proxy(live_server: Any) -> Iterator[FlakyProxy]:
    server = FlakyProxy(live_server.url, {2: "drop", 3: "lose", 4: "503", 5: "drop"})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_an_outage_in_the_middle_of_a_sync_loses_nothing(
    sync: Any, laptop: Entity, tmp_path: Path, proxy: FlakyProxy
) -> None:
    db = capture_db(tmp_path, rows=700)
    keys = expected_keys(db)
    code, out, err = sync(db, "--batch-size", "100", url=proxy.url)
    assert code == 0, err
    assert err.count("retry") == 4
    events = stored(laptop)
    assert {e.source_key for e in events} == keys and len(events) == len(keys)
    # The batch whose answer was lost was stored, sent again, and only counted the second time.
    assert f"{len(keys) - 100} accepted, 100 duplicates" in out


def test_a_server_that_stays_down_exits_1_saying_what_is_pending(
    sync: Any, laptop: Entity, tmp_path: Path
) -> None:
    db = capture_db(tmp_path, rows=300)
    keys = expected_keys(db)
    closed = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    down = f"http://127.0.0.1:{closed.server_address[1]}"
    closed.server_close()  # nothing listens there now
    code, _, err = sync(db, "--retries", "2", url=down)
    assert code == 1
    assert err.count("retry") == 2
    assert f"{len(keys)} records pending since the start; run again to resume." in err
    assert not sync.checkpoint.exists() and not stored(laptop)

    code, _, err = sync(db)
    assert code == 0, err
    assert len(stored(laptop)) == len(keys)


def test_typed_text_never_leaves_the_machine_unless_included(
    sync: Any, laptop: Entity, tmp_path: Path, settings: Any
) -> None:
    settings.AFRAMES_STORE_INPUT_TEXT = True  # the server would keep it: only the agent can stop it
    db = capture_db(tmp_path, rows=1500)
    code, out, _ = sync(db)
    assert code == 0
    inputs = [e for e in stored(laptop) if e.kind == "input"]
    assert inputs and not any("text" in e.payload for e in inputs)
    assert "typed text removed from" in out and "removed from 0 " not in out

    code, out, _ = sync(db, "--include-text", "--create", "--tz", "Europe/Berlin", entity="alice-2")
    assert code == 0
    texts = [e for e in stored(Entity.objects.get(key="alice-2")) if "text" in e.payload]
    assert texts and "typed text included" in out

    settings.AFRAMES_STORE_INPUT_TEXT = False  # the server's own setting still decides storage
    code, out, _ = sync(db, "--include-text", "--create", "--tz", "UTC", entity="alice-3")
    assert code == 0 and f"the server did not store {len(texts)} text fields" in out
    assert not any("text" in e.payload for e in stored(Entity.objects.get(key="alice-3")))


def test_denied_apps_and_sites_are_left_out(sync: Any, laptop: Entity, tmp_path: Path) -> None:
    db = capture_db(tmp_path, rows=1500)
    code, out, _ = sync(db, "--deny-app", "slack", "--deny-site", "github.com")
    assert code == 0 and "left out" in out
    events = stored(laptop)
    payloads = [e.payload for e in events if e.kind in ("snapshot", "input")]
    assert payloads
    assert not any((p.get("app") or "").lower() == "slack" for p in payloads)
    sites = {site_of(p.get("url")) for p in payloads} - {None}
    assert sites and not any(s == "github.com" or s.endswith(".github.com") for s in sites)
    snapshots = {e.source_key for e in events if e.kind == "snapshot"}
    assert all(e.payload["snapshot"] in snapshots for e in events if e.kind == "elements")


def test_dry_run_sends_nothing_and_leaves_the_checkpoint(
    sync: Any, laptop: Entity, tmp_path: Path
) -> None:
    db = capture_db(tmp_path, rows=300)
    code, out, _ = sync(db, "--dry-run", "--show", "3")
    assert code == 0
    lines = out.splitlines()
    assert [json.loads(line)["source_key"] for line in lines[:3]]
    assert "nothing was sent and the checkpoint is unchanged" in lines[3]
    assert not stored(laptop) and not sync.checkpoint.exists()


def test_an_unknown_entity_says_how_to_create_it_and_create_does(
    sync: Any, team: Any, tmp_path: Path
) -> None:
    db = capture_db(tmp_path, rows=100)
    code, _, err = sync(db, entity="new-laptop")
    assert code == 1 and "--create --scope desktop --tz ZONE" in err
    code, _, err = sync(db, "--create", "--tz", "Europe/Berlin", entity="new-laptop")
    assert code == 0, err
    entity = Entity.objects.get(team=team, key="new-laptop")
    assert str(entity.timezone) == "Europe/Berlin" and stored(entity)


def test_agents_sharing_a_checkpoint_keep_each_others_progress(tmp_path: Path) -> None:
    # Two agents (two sources, one default checkpoint file), each loaded before the other wrote.
    path = tmp_path / "state" / "checkpoint.json"
    screen, watcher = Checkpoint(path), Checkpoint(path)
    screen.set("http://a laptop screenpipe:db", 1_772_000_000.0)
    watcher.set("http://a laptop activitywatch-server:aw", 1_772_000_100.0)
    screen.set("http://a laptop screenpipe:db", 1_772_000_200.0)
    again = Checkpoint(path)
    assert again.get("http://a laptop screenpipe:db") == 1_772_000_200.0
    assert again.get("http://a laptop activitywatch-server:aw") == 1_772_000_100.0
    assert (tmp_path / "state" / "checkpoint.json.lock").exists()


def test_importing_the_agent_loads_neither_django_nor_the_web_app() -> None:
    check = (
        "import aframes_sync.__main__, sys; "
        "assert not any(m.startswith(('django', 'aframes_web')) for m in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", check], check=True, cwd=Path(__file__).parents[1])


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--source", "activitywatch-server:localhost:5600"], "activitywatch-server:http://"),
        (["--source", "activitywatch:x.json", "--entity", "x"], "expected screenpipe:PATH or"),
        (["--source", "screenpipe:/nowhere/db.sqlite", "--entity", "x"], "no capture database"),
        (["--source", "screenpipe:{db}", "--entity", "x", "--url", "http://h"], "no token"),
        (["--source", "screenpipe:{db}", "--entity", "x", "--once", "--follow"], "not allowed"),
        (["--source", "screenpipe:{db}", "--entity", "x", "--create", "--dry-run"], "--tz"),
    ],
)
def test_bad_usage_exits_2_with_one_line(
    argv: list[str], says: str, tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AFRAMES_TOKEN", raising=False)
    db = tmp_path / "db.sqlite"
    db.write_bytes(b"")
    with pytest.raises(SystemExit) as exit_:
        main([a.replace("{db}", str(db)) for a in argv])
    assert exit_.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and says in lines[0]


# --- activitywatch-server:URL against a real aw-server (testing mode, memory storage) ---


@pytest.fixture(scope="module")
def aw_server() -> Iterator[str]:
    """A real aw-server on a free loopback port, empty; killed at teardown."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    binary = Path(sys.executable).with_name("aw-server")
    process = subprocess.Popen(
        [str(binary), "--testing", "--port", str(port), "--storage", "memory"]
        + ["--host", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "HOME": os.environ.get("HOME", "/tmp")},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/0/info", timeout=1):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"aw-server did not start on port {port}")
                time.sleep(0.1)
        yield url
    finally:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def aw_export(aw_server: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SYNTHETIC working day imported into the aw-server, and the server's export of it."""
    export = activitywatch_export(generate_day(DAY, seed=7))
    request = urllib.request.Request(
        f"{aw_server}/api/0/import",
        data=json.dumps(export).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30):
        pass
    # The file is the server's own export: aw-core keeps timestamps to the millisecond, so
    # the synthetic microseconds would make touching AFK spans overlap on the server only.
    with urllib.request.urlopen(f"{aw_server}/api/0/export", timeout=30) as response:
        body = response.read()
    path = tmp_path_factory.mktemp("aw") / "aw-export.json"
    path.write_bytes(body)
    return path


def aw_keys(path: Path) -> set[str]:
    """The source keys ``manage.py import_events activitywatch`` gives the export's rows."""
    return {r["source_key"] for _w, r in records_from_capture(activitywatch.read(path), "aw")}


def test_activitywatch_server_sync_stores_what_an_import_of_its_export_stores(
    sync: Any, laptop: Entity, aw_server: str, aw_export: Path, tmp_path: Path
) -> None:
    from django.core.management import call_command

    keys = aw_keys(aw_export)
    assert any(k.startswith("aw:s") for k in keys) and any(k.startswith("aw:a") for k in keys)
    source = f"activitywatch-server:{aw_server}"
    code, out, err = sync(source, "--once")
    assert code == 0, err
    assert {e.source_key for e in stored(laptop)} == keys
    assert len(stored(laptop)) == len(keys)
    assert f"{len(keys)} accepted" in out
    assert "emulated as snapshot rows" in err  # the reader's disclosures reach the user

    code, out, err = sync(source, "--once")
    assert code == 0 and "0 accepted" in out, err
    assert len(stored(laptop)) == len(keys)

    summary = io.StringIO()
    call_command(
        "import_events", "activitywatch", str(aw_export), "--team", "acme",
        "--entity", "alice-laptop", "--json", stdout=summary, stderr=io.StringIO(),
    )  # fmt: skip
    assert len(stored(laptop)) == len(keys), summary.getvalue()


@pytest.mark.parametrize("window_s", [7 * 60 + 13, 3 * 3600 + 1])
def test_activitywatch_server_windows_split_intervals_without_loss_or_duplicates(
    aw_server: str, aw_export: Path, window_s: float
) -> None:
    source = ActivityWatchServerSource(aw_server)
    span = source.span()
    assert span is not None
    seen: list[dict[str, Any]] = []
    low = span[0] + 11.5  # edges fall inside intervals, not on heartbeats
    first = True
    while low < span[1] + 1:
        if first:  # the rows before the first edge, as a checkpoint would have sent them
            seen.extend(r for _t, r in source.records(span[0], low))
            first = False
        seen.extend(r for _t, r in source.records(low, low + window_s))
        low += window_s
    keys = [r["source_key"] for r in seen]
    assert len(keys) == len(set(keys))  # no row or absence twice
    full = dict(records_from_capture(activitywatch.read(aw_export), "aw"))
    assert {r["source_key"]: r for r in seen} == {r["source_key"]: r for r in full.values()}


def test_the_summary_line_counts_in_words_that_agree_with_the_numbers() -> None:
    from aframes_sync.agent import Report, describe
    from aframes_sync.client import Ack
    from aframes_sync.privacy import Privacy

    one = describe(Report(records=1, batches=1, ack=Ack(1, 1, 1)), Privacy(), dry_run=False)
    assert "sent 1 record in 1 batch: 1 accepted, 1 duplicate" in one
    assert "did not store 1 text field" in one
    many = describe(Report(records=2, batches=2, ack=Ack(0, 2)), Privacy(), dry_run=True)
    assert "would send 2 records in 2 batches" in many
