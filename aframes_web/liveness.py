"""Whether background work is alive: PostgreSQL advisory locks held by the process doing it.

A worker that dies as a whole (its machine or container lost) leaves its rows saying
"running" or "queued", and the broker keeps its message until the visibility timeout. The
database knows better: a lock taken with ``pg_advisory_lock`` belongs to the connection that
took it and goes the moment that connection does, which for a killed process is at once.
Reconciliation (``aframes_web/reconcile``) asks :func:`holders` which pieces of work still
have a living owner and hands the others back (ARCHITECTURE.md, "derived state").

On SQLite (the embedded single-machine default) there is no such lock; :func:`holding`
always succeeds and :func:`holders` answers None, "unknown", so callers fall back on time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

# Namespaces of the two-key advisory locks (the first key); the compile and memory locks of
# aframes_web/activity and memory/ are transaction locks in their own namespaces ('AF', 'PM').
IMPORT_JOB = 0x494A  # 'IJ': an import job being run
BENCHMARK_RUN = 0x4252  # 'BR': a benchmark run being executed
RECONCILE = 0x5250  # 'RP': the reconciliation pass (key 0): one at a time


def _postgres() -> bool:
    return connection.vendor == "postgresql"


@contextmanager
def holding(namespace: int, key: int) -> Iterator[bool]:
    """Hold the session lock (``namespace``, ``key``) for the block; yields whether it was
    taken (False: another living process holds it). Released at the end of the block, or by
    PostgreSQL when the process dies in it."""
    if not _postgres():
        yield True
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [namespace, key])
        taken = bool(cursor.fetchone()[0])
    try:
        yield taken
    finally:
        if taken and connection.connection is not None:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [namespace, key])
            except Exception:  # the connection is gone, and with it the lock
                pass


def holders(namespace: int) -> set[int] | None:
    """The keys of ``namespace`` whose lock a living connection holds; None on SQLite."""
    if not _postgres():
        return None
    with connection.cursor() as cursor:
        # A two-key lock shows its keys as classid and objid, with objsubid 2.
        cursor.execute(
            "SELECT objid FROM pg_locks "
            "WHERE locktype = 'advisory' AND objsubid = 2 AND granted AND classid = %s "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            [namespace],
        )
        return {int(row[0]) for row in cursor.fetchall()}
