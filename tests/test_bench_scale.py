"""``make bench-scale`` runs on a bare machine and reports the growth figures the targets name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg

from perf.harness import bench_database_url
from tests.conftest import need_service

ROOT = Path(__file__).resolve().parent.parent


def _postgres() -> bool:
    try:
        with psycopg.connect(bench_database_url("postgres"), connect_timeout=3):
            return True
    except psycopg.OperationalError:
        return False


def test_a_short_scale_run_reports_growth_team_pages_and_a_plot(tmp_path: Path) -> None:
    need_service("PostgreSQL", _postgres())
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE",)}
    done = subprocess.run(
        [sys.executable, "-m", "perf.scale", "--days", "8", "--at", "4,8", "--entities", "3"]
        + ["--decide-max", "5", "--rounds", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["synthetic"] is True and figures["database"] == "postgresql"
    for key in ("close_growth_8_vs_4", "decision_p95_growth_8_vs_4", "context_p95_growth_8_vs_4"):
        assert isinstance(figures[key], float) and figures[key] > 0, key
    assert figures["team_entities"] == 3
    assert figures["page_p95_ms_3_entities"] > 0
    for scope in ("home", "desktop"):
        for at in ("4", "8"):
            row = figures[scope][at]
            assert row["close_ms"] > 0 and row["decision_p95_ms"] > 0 and row["context_p95_ms"] > 0
            assert row["memory_bytes_per_entity_day"] > 0
    assert "after 4 days" in done.stdout and "SYNTHETIC" in done.stdout
    assert (ROOT / "bench-results" / "scale.png").stat().st_size > 0


def test_bad_arguments_stop_with_the_reason() -> None:
    for args, said in (
        (["--at", "30,x"], "--at takes history lengths"),
        (["--days", "20", "--at", "2,20"], "--at must name lengths from 3"),
        (["--scopes", "garden"], "unknown scope"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "perf.scale", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2 and said in done.stderr, (args, done.stderr)
