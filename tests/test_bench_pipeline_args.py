"""``make bench-pipeline`` refuses counts that cannot run, before it starts anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("args", [["--workers", "0"], ["--import-lines", "0"], ["--batches", "0"]])
def test_counts_below_one_stop_with_the_reason(args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "perf.pipeline", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--workers, --import-lines and --batches must be at least 1" in done.stderr
