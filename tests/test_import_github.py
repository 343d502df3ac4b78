"""The github importer: GH Archive events and GitHub REST objects, one entity per repository."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
from collections import Counter
from io import StringIO
from pathlib import Path
from typing import Any

from django.core.management import call_command

from aframes_web.streams.importers import SourceItem
from aframes_web.streams.importers import formats as registered_formats
from aframes_web.streams.importers.github import (
    ENTITY_MAX,
    FORMAT,
    TEXT_MAX,
    GithubReader,
    entity_key,
)
from aframes_web.streams.models import Entity, Event
from aframes_web.streams.records import validate_item
from benchmark.synthetic.gharchive import TRIMMED_FROM, generate_events, write_file
from tests.conftest import need_service

DATA = Path(__file__).parents[2] / "shared" / "data"
K8S = DATA / "github-events-k8s-2017" / "events.ndjson.gz"
ANTS = DATA / "github-rest-ants"


def test_github_format_is_registered() -> None:
    assert registered_formats()["github"] is FORMAT


def _need(path: Path) -> None:
    need_service(f"shared data {path.relative_to(DATA)}", path.exists())


def _run(path: Path, *extra: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(
        "import_events",
        "github",
        str(path),
        "--team",
        "acme",
        "--entity",
        "gh",
        *extra,
        stdout=out,
        stderr=err,
    )
    return out.getvalue(), err.getvalue()


def _summary(path: Path) -> dict[str, Any]:
    return json.loads(_run(path, "--json")[0])


def _items(path: Path) -> list[SourceItem]:
    return list(GithubReader(path))


def _k8s_lines() -> list[str]:
    with gzip.open(K8S, "rt", encoding="utf-8") as handle:
        return [line for line in handle if line.strip()]


def _csv_objects(name: str) -> list[dict[str, Any]]:
    with (ANTS / name).open(newline="", encoding="utf-8") as handle:
        return [json.loads(row["data"]) for row in csv.DictReader(handle)]


def _assert_storable_and_compact(items: list[SourceItem]) -> None:
    """Every record passes the shared validation, with a bounded, URL-free summary."""
    for source in items:
        assert source.error is None, f"{source.location}: {source.error}"
        record, _ = validate_item(source.item, scope="code", store_text=False)
        assert record.occurred_at.utcoffset().total_seconds() == 0
        assert source.item["occurred_at"].endswith("Z")
        payload = source.item["payload"]
        assert set(payload) <= {"type", "value", "unit", "attributes"}
        for key, value in payload["attributes"].items():
            assert not key.endswith("url") and key != "body", (source.location, key)
            values = value if isinstance(value, list) else [value]
            for scalar in values:
                assert scalar is None or isinstance(scalar, str | int | float | bool)
                if isinstance(scalar, str):
                    assert len(scalar) <= TEXT_MAX and not scalar.startswith("http")
                    assert "\x00" not in scalar


# --- the real GH Archive sample -------------------------------------------------------------


def test_real_k8s_events_import_into_one_entity_per_repository(team) -> None:
    _need(K8S)
    per_repo = Counter(json.loads(line)["repo"]["name"] for line in _k8s_lines())
    expected = {f"gh:{name.replace('/', '.').lower()}": n for name, n in per_repo.items()}
    assert len(expected) == 40 and sum(expected.values()) == 4596

    summary = _summary(K8S)
    assert summary["read"] == 4596 and summary["imported"] == 4596
    assert summary["duplicates"] == 0 and summary["rejected"] == {}
    assert summary["entities"] == dict(sorted(expected.items()))
    entities = Entity.objects.filter(team=team, key__startswith="gh:")
    assert entities.count() == 40
    assert set(entities.values_list("scope", flat=True)) == {"code"}
    stored = Counter(Event.objects.filter(entity__team=team).values_list("entity__key", flat=True))
    assert stored == expected

    push = Event.objects.get(source_key="gh:6312349682")
    assert push.entity.key == "gh:kubernetes.examples"
    assert push.payload == {
        "type": "PushEvent",
        "value": 1,
        "unit": "commits",
        "attributes": {
            "actor": "ahmetb",
            "ref": "refs/heads/master",
            "head": "bd05cc8c0909ec69a922611e6dafea4c15ddb6ea",
            "distinct": 1,
            "message": "Fix a wrong link (#36)",
        },
    }

    again = _summary(K8S)
    assert again["imported"] == 0 and again["duplicates"] == 4596
    assert Event.objects.filter(entity__team=team).count() == 4596


def test_every_real_record_passes_validation_with_a_compact_summary() -> None:
    _need(K8S)
    _need(ANTS)
    archive = _items(K8S)
    assert len(archive) == 4596
    _assert_storable_and_compact(archive)
    _assert_storable_and_compact(_items(ANTS))
    kinds = Counter(source.item["payload"]["type"] for source in archive)
    assert kinds["IssueCommentEvent"] == 2047 and kinds["PushEvent"] == 250
    pull = next(s.item for s in archive if s.item["payload"]["type"] == "PullRequestEvent")
    assert {"action", "number", "title", "state", "head", "base"} <= set(
        pull["payload"]["attributes"]
    )


def test_a_folder_of_one_pretty_printed_event_per_file_reads_like_the_ndjson(
    team, tmp_path
) -> None:
    _need(K8S)
    lines = _k8s_lines()[:30]
    folder = tmp_path / "events"
    (folder / "more").mkdir(parents=True)
    for position, line in enumerate(lines):
        event = json.loads(line)
        where = folder / "more" if position % 2 else folder
        (where / f"{event['id']}.json").write_text(json.dumps(event, indent=2))
    (folder / "README.md").write_text("not an event")
    ndjson = tmp_path / "events.ndjson"
    ndjson.write_text("".join(lines))

    from_folder = {s.item["source_key"]: (s.entity, s.item) for s in _items(folder)}
    from_lines = {s.item["source_key"]: (s.entity, s.item) for s in _items(ndjson)}
    assert from_folder == from_lines and len(from_folder) == 30

    reader = GithubReader(folder)
    first = next(iter(reader))
    assert first.location.endswith(".json:1")
    out, _ = _run(folder)
    assert "read 30, imported 30" in out
    assert "1 file(s) skipped: not JSON, NDJSON or CSV by name (README.md)" in out
    assert Event.objects.filter(entity__team=team).count() == 30


# --- full and trimmed payloads --------------------------------------------------------------


def _event(kind: str, payload: dict[str, Any], when: str = "2025-10-08T12:00:00Z") -> str:
    return json.dumps(
        {
            "id": str(int(hashlib.sha256(f"{kind}{when}{payload}".encode()).hexdigest()[:10], 16)),
            "type": kind,
            "actor": {"id": 1, "login": "octocat", "avatar_url": "https://x"},
            "repo": {"id": 9, "name": "Octo-Org/Hello.World", "url": "https://api.github.com/x"},
            "payload": payload,
            "public": True,
            "created_at": when,
        }
    )


def test_trimmed_payloads_keep_what_is_there_and_guess_nothing(tmp_path) -> None:
    sha = "a" * 40
    full_push = {
        "push_id": 1,
        "size": 3,
        "distinct_size": 2,
        "ref": "refs/heads/main",
        "head": sha,
        "before": "b" * 40,
        "commits": [{"sha": sha, "message": "First line\n\nbody", "url": "https://x"}],
    }
    trimmed_push = {
        "repository_id": 9,
        "push_id": 2,
        "ref": "refs/heads/main",
        "head": sha,
        "before": "b" * 40,
    }
    trimmed_pr = {
        "action": "closed",
        "number": 42,
        "pull_request": {
            "url": "https://api.github.com/repos/octo-org/hello.world/pulls/42",
            "id": 5,
            "number": 42,
            "head": {"ref": "topic", "sha": sha, "repo": {"id": 9, "name": "octo-org/hello.world"}},
            "base": {"ref": "main", "sha": sha, "repo": {"id": 9, "name": "octo-org/hello.world"}},
        },
    }
    path = tmp_path / "trimmed.json"
    path.write_text(
        "\n".join(
            [
                _event("PushEvent", full_push, "2025-10-06T12:00:00Z"),
                _event("PushEvent", trimmed_push),
                _event("PullRequestEvent", trimmed_pr),
            ]
        )
    )
    full, trimmed, pull = _items(path)
    assert {full.entity, trimmed.entity, pull.entity} == {"octo-org.hello.world"}
    assert full.item["payload"]["value"] == 3 and full.item["payload"]["unit"] == "commits"
    assert full.item["payload"]["attributes"]["message"] == "First line"
    assert trimmed.item["payload"] == {
        "type": "PushEvent",
        "value": None,
        "attributes": {"actor": "octocat", "ref": "refs/heads/main", "head": sha},
    }
    assert pull.item["payload"]["attributes"] == {
        "actor": "octocat",
        "action": "closed",
        "number": 42,
        "head": "topic",
        "base": "main",
    }
    _assert_storable_and_compact([full, trimmed, pull])


def test_synthetic_archive_with_both_shapes_and_quirks_imports_cleanly(team, tmp_path) -> None:
    events = list(generate_events(4000, seed=3, repos=5))
    path = write_file(tmp_path / "synthetic.json.gz", 4000, seed=3, repos=5)
    pushes = [e for e in events if e["type"] == "PushEvent"]
    trimmed = [e for e in pushes if "commits" not in e["payload"]]
    assert 0 < len(trimmed) < len(pushes)
    boundary = TRIMMED_FROM.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert all(e["created_at"] >= boundary for e in trimmed)

    items = _items(path)
    _assert_storable_and_compact(items)
    by_key = {s.item["source_key"]: s for s in items}
    quirky = [e for e in events if "\\u0000" in json.dumps(e)]
    assert quirky, "the generator carries a NUL character somewhere"
    shouting = [e for e in events if e["repo"]["name"].isupper()]
    assert shouting
    for event in shouting:
        lower = event["repo"]["name"].lower().replace("/", ".")
        assert by_key[f"gh:{event['id']}"].entity == lower
    big_push = next(e for e in pushes if e["payload"].get("size", 0) > 20)
    assert len(big_push["payload"]["commits"]) == 20
    assert by_key[f"gh:{big_push['id']}"].item["payload"]["value"] == big_push["payload"]["size"]
    long_titles = [s for s in items if len(s.item["payload"]["attributes"].get("title", "")) == 300]
    assert long_titles and all(
        s.item["payload"]["attributes"]["title"][-1] == "…" for s in long_titles
    )

    summary = _summary(path)
    assert summary["imported"] == 4000 and summary["rejected"] == {}
    assert len(summary["entities"]) == 5
    unknown = Event.objects.filter(payload__type="PushEvent", payload__value=None).count()
    assert unknown == len(trimmed)


def test_rerun_is_idempotent_and_an_extended_file_adds_only_new_events(team, tmp_path) -> None:
    lines = [json.dumps(e) for e in generate_events(400, seed=5, repos=3)]
    path = tmp_path / "events.ndjson"
    path.write_text("\n".join(lines[:300]) + "\n")
    assert _summary(path)["imported"] == 300
    again = _summary(path)
    assert again["imported"] == 0 and again["duplicates"] == 300
    path.write_text("\n".join(lines) + "\n")
    extended = _summary(path)
    assert extended["imported"] == 100 and extended["duplicates"] == 300


# --- GitHub REST objects --------------------------------------------------------------------

# Distinct observations of the panjf2000/ants fixtures, counted by hand from the CSVs: each
# listing repeats one object; the issues listing holds 16 pull requests of the pulls listing.
ANTS_TYPES = {
    "issue_comment": 94,
    "issue_event": 49,
    "issue_opened": 26,
    "issue_closed": 26,
    "pr_opened": 49,
    "pr_merged": 26,
    "pr_closed": 19,
    "pr_review": 30,
    "pr_review_comment": 16,
    "workflow_run": 35,
    "workflow_job": 35,
    "pr_commit": 90,
}


def test_the_real_rest_csv_folder_imports_by_object_kind(team) -> None:
    _need(ANTS)
    out, err = _run(ANTS, "--json")
    summary = json.loads(out)
    assert summary["rejected"] == {}
    assert summary["entities"] == {"gh:apache.incubator-devlake": 1, "gh:panjf2000.ants": 495}
    assert summary["imported"] == 496 and summary["read"] == 534
    assert summary["duplicates"] == 38
    notes = " | ".join(summary["notes"])
    assert "_raw_github_api_accounts.csv: 15 skipped" in notes
    assert "_raw_github_api_account_orgs.csv: 13 skipped" in notes
    assert "(SOURCE.md)" in notes

    ants = Entity.objects.get(team=team, key="gh:panjf2000.ants")
    types = Counter(Event.objects.filter(entity=ants).values_list("payload__type", flat=True))
    assert types == ANTS_TYPES
    milestone = Event.objects.get(entity__key="gh:apache.incubator-devlake")
    assert milestone.payload["type"] == "milestone_created"

    merged = Event.objects.get(entity=ants, source_key="ghrest:pr:4:merged")
    assert merged.occurred_at.isoformat() == "2018-07-26T02:32:41+00:00"
    opened = Event.objects.get(entity=ants, source_key="ghrest:pr:4:opened")
    assert opened.payload["attributes"] == {
        "number": 4,
        "title": "pre-allocate the capacity of the worker list",
        "author": "barryz",
    }  # nothing known only later (state, labels) rides on the opening
    run = Event.objects.filter(entity=ants, payload__type="workflow_run")
    assert {r.payload["attributes"].get("conclusion") for r in run} >= {"success", "failure"}
    job = Event.objects.get(entity=ants, source_key="ghrest:workflow_job:1924918171:1")
    assert job.payload["value"] == 125.0 and job.payload["unit"] == "s"


def test_json_arrays_of_rest_objects_are_told_apart_by_their_fields(team, tmp_path) -> None:
    _need(ANTS)
    issues = _csv_objects("_raw_github_api_issues.csv")
    plain = [o for o in issues if "pull_request" not in o][:3]
    objects = [
        *plain,
        *_csv_objects("_raw_github_api_pull_requests.csv")[:2],
        *_csv_objects("_raw_github_api_pull_request_reviews.csv")[:2],
        _csv_objects("_raw_github_api_runs.csv")[0],
        _csv_objects("_raw_github_api_jobs.csv")[0],
        _csv_objects("_raw_github_api_events.csv")[0],
        _csv_objects("_raw_github_api_pull_request_review_comments.csv")[0],
        _csv_objects("_raw_github_api_comments.csv")[0],
        _csv_objects("_raw_github_api_accounts.csv")[0],
    ]
    pretty = tmp_path / "export.json"
    pretty.write_text(json.dumps(objects, indent=2))
    minified = tmp_path / "export-min.json"
    minified.write_text(json.dumps(objects))

    items = _items(pretty)
    assert [s.item for s in items] == [s.item for s in _items(minified)]
    _assert_storable_and_compact(items)
    types = Counter(s.item["payload"]["type"] for s in items)
    closed = sum(1 for o in plain if o["closed_at"])
    assert types["issue_opened"] == 3 and types["issue_closed"] == closed
    assert types["pr_opened"] == 2 and types["pr_review"] == 2
    assert types["workflow_run"] == types["workflow_job"] == types["issue_event"] == 1
    assert types["pr_review_comment"] == types["issue_comment"] == 1
    assert items[0].location == "export.json:2"  # the line where the first element begins

    reader = GithubReader(pretty)
    list(reader)
    assert reader.notes == [
        "export.json: 1 skipped: accounts and organisations belong to no repository"
    ]
    assert _summary(pretty)["rejected"] == {}


def test_a_large_array_streams_through_the_sliding_buffer(tmp_path) -> None:
    _need(K8S)
    events = [json.loads(line) for line in _k8s_lines()[:200]]
    path = tmp_path / "repo-events.json"  # a REST /repos/.../events listing: GH Archive shape
    path.write_text(json.dumps(events, indent=1))
    assert path.stat().st_size > 1 << 20
    items = _items(path)
    assert [s.item["source_key"] for s in items] == [f"gh:{e['id']}" for e in events]
    starts = [n for n, line in enumerate(path.read_text().split("\n"), 1) if line == " {"]
    assert [int(s.location.rsplit(":", 1)[1]) for s in items] == starts


# --- what cannot be read ----------------------------------------------------------------------


def test_bad_lines_are_reported_with_file_and_line(team, tmp_path) -> None:
    good = _event("WatchEvent", {"action": "started"}, "2017-07-24T00:00:00Z")
    no_repo = json.loads(_event("WatchEvent", {}, "2017-07-24T00:00:01Z"))
    no_repo["repo"] = {"name": "not-a-repository"}
    bad_time = json.loads(_event("WatchEvent", {}, "yesterday"))
    path = tmp_path / "bad.ndjson"
    path.write_text(
        "\n".join([good, "{broken", json.dumps(no_repo), "", json.dumps(bad_time), "42"]) + "\n"
    )
    out, err = _run(path)
    assert "read 5, imported 1, duplicates 0, rejected 4 (unreadable: 4)" in out
    assert "bad.ndjson:2: not valid JSON" in err
    assert "bad.ndjson:3: repo.name 'not-a-repository' is not an owner/name repository" in err
    assert "bad.ndjson:5: created_at 'yesterday' is not an ISO 8601 time" in err
    assert "bad.ndjson:6: expected a JSON object, got a number" in err

    table = tmp_path / "_raw_github_api_comments.csv"
    comment = _csv_objects("_raw_github_api_comments.csv")[0] if ANTS.exists() else None
    rows = [["id", "data"], ["1", "{not json"]]
    if comment is not None:
        rows.append(["2", json.dumps(comment)])
    with table.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    items = _items(table)
    assert items[0].location == "_raw_github_api_comments.csv:2"
    assert items[0].error.startswith("data is not valid JSON")

    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"a": 1},\n  {"b": \n')
    first, second = _items(broken)
    assert first.location == "broken.json:2" and "not a GitHub event" in first.error
    assert second.location == "broken.json:3" and "not valid JSON" in second.error


def test_odd_json_lines_fall_back_to_json_and_a_lone_surrogate_is_one_bad_line(
    team, tmp_path
) -> None:
    # Lines orjson refuses (a byte-order mark, a NaN) are read as json reads them; half a
    # surrogate pair in a title cannot be stored, so that event alone is rejected.
    bom = "\ufeff" + _event("WatchEvent", {"action": "started"}, "2017-07-24T00:00:00Z")
    nan = _event("ReleaseEvent", {"action": "published"}, "2017-07-24T00:00:01Z").replace(
        '"public": true', '"public": NaN'
    )
    surrogate = _event(
        "IssuesEvent", {"action": "opened", "issue": {"number": 7, "title": "half \ud83d"}}
    )
    good = _event("IssuesEvent", {"action": "closed", "issue": {"number": 7, "title": "ok"}})
    path = tmp_path / "odd.ndjson"
    path.write_text("\n".join([bom, nan, surrogate, good]) + "\n", encoding="utf-8")
    out, err = _run(path)
    assert "read 4, imported 3, duplicates 0, rejected 1 (payload: 1)" in out
    assert "odd.ndjson:3: payload: contains a lone surrogate (\\ud83d)" in err


def test_a_truncated_gzip_file_keeps_what_came_before_and_says_where_it_ends(tmp_path) -> None:
    whole = tmp_path / "whole.json.gz"
    write_file(whole, 2000, seed=2)
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    items = _items(cut)
    *events, last = items
    assert 0 < len(events) < 2000 and all(s.error is None for s in events)
    assert last.location == f"cut.json.gz:{len(events) + 1}"
    assert last.error.startswith("cannot read further")


def test_repository_names_become_valid_entity_keys() -> None:
    assert entity_key("kubernetes/kubernetes.github.io") == "kubernetes.kubernetes.github.io"
    assert entity_key("Octo-Org/Hello_World") == "octo-org.hello_world"
    long_name = "an-owner/" + "x" * 100
    key = entity_key(long_name)
    assert key is not None and len(key) == ENTITY_MAX
    assert key != entity_key(long_name[:-1] + "y") and key == entity_key(long_name)
    for wrong in ("no-slash", "a/b/c", "/name", "owner/", "own er/name", ""):
        assert entity_key(wrong) is None


def test_the_generator_is_deterministic_and_streams_both_shapes(tmp_path) -> None:
    first = write_file(tmp_path / "a.json.gz", 500, seed=11)
    second = write_file(tmp_path / "b.json.gz", 500, seed=11)
    assert first.read_bytes() == second.read_bytes()
    plain = write_file(tmp_path / "c.ndjson", 500, seed=11)
    assert gzip.decompress(first.read_bytes()) == plain.read_bytes()
    lines = plain.read_text().splitlines()
    assert len(lines) == 500
    kinds = Counter(json.loads(line)["type"] for line in lines)
    assert len(kinds) >= 10 and kinds.most_common(1)[0][0] == "PushEvent"
