"""A benchmark harness gets its scratch database's settings on a bare machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import sys
from pathlib import Path
from perf.harness import bench_database_url, django_on, settings_on
if sys.argv[1] == "first":
    settings_on("aframes_bench_probe")
from aframes_web.streams.importers.base import ReadLimits
ReadLimits.for_file(Path("x"), gzipped=False)  # reads settings, as reading a data file does
django_on({"DATABASE_URL": bench_database_url("aframes_bench_probe")})
from django.conf import settings
print(settings.DATABASES["default"]["NAME"])
"""


def _run(mode: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")
    }
    env["DJANGO_SETTINGS_MODULE"] = "aframes_web.settings"
    env.setdefault("SECRET_KEY", "test-only")
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], cwd=ROOT, env=env, capture_output=True, text=True
    )


def test_settings_read_before_setup_name_the_scratch_database_when_pointed_first() -> None:
    done = _run("first")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "aframes_bench_probe"


def test_settings_read_too_early_stop_the_benchmark_with_the_reason() -> None:
    done = _run("late")
    assert done.returncode == 2
    assert "before the benchmark pointed it at its scratch database" in done.stderr
    assert "settings_on" in done.stderr


def test_a_process_that_ignores_sigterm_is_killed_with_its_children_after_the_grace() -> None:
    import time

    from perf.harness import stop

    # A parent that ignores SIGTERM, with a child that does too (a worker and its pool).
    code = (
        "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)']); print('up', "
        "flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
    began = time.monotonic()
    stop(proc, grace=1)
    assert proc.returncode is not None and time.monotonic() - began < 10
    deadline = time.monotonic() + 10  # the killed child is reaped by init, not at once
    while subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True).stdout.strip():
        assert time.monotonic() < deadline, "the child outlived the stop"
        time.sleep(0.1)
