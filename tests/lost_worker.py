"""An import whose worker dies in the middle, for the tests of resuming it (reconciliation,
imports that take turns)."""

from __future__ import annotations

from typing import Any

import pytest

from aframes_web.streams import importing
from aframes_web.streams.uploads import import_job_run


class WorkerKilled(BaseException):
    """Stands for SIGKILL: nothing in the job catches it, so the job stays "running"."""


def run_until_killed(monkeypatch: pytest.MonkeyPatch, job_id: int) -> None:
    """Run import job ``job_id``: it stores one batch, and its worker dies as it stores the
    next. The store is the real one again afterwards."""
    real = importing.events_store
    stored: list[int] = []

    def store_then_die(*args: Any, **kwargs: Any) -> Any:
        if stored:
            raise WorkerKilled
        stored.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(importing, "events_store", store_then_die)
    with pytest.raises(WorkerKilled):
        import_job_run(job_id=job_id)
    monkeypatch.setattr(importing, "events_store", real)
