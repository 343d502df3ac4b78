"""The agent's checkpoint: per stream, the UTC time below which the server has everything.

One small JSON file, rewritten atomically (temporary file in the same folder, fsync,
``os.replace``), so a crash or a power cut leaves either the old or the new checkpoint. Several
agents may share the file (the default one serves every source a member syncs): each update
re-reads it under a lock on ``<checkpoint>.lock`` and changes only its own stream, so no agent
writes back a stale view of another's progress.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from compiler.sources import utc_iso

VERSION = 1


class CheckpointError(Exception):
    """The checkpoint file exists but cannot be read; the message says what to do."""


def default_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(base) / "aframes-sync" / "checkpoint.json"


class Checkpoint:
    """The acknowledged-until times of every stream (url, entity, source) the file holds."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._streams = self._load()

    def _load(self) -> dict[str, dict[str, Any]]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            streams = data["streams"]
            if not isinstance(streams, dict):
                raise TypeError("streams is not an object")
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise CheckpointError(
                f"{self.path}: not a checkpoint this agent wrote ({err}); move it away to "
                "start over (re-sending is harmless: the server counts duplicates)."
            ) from None
        return streams

    def get(self, stream: str) -> float | None:
        entry = self._streams.get(stream)
        if not isinstance(entry, dict) or not isinstance(entry.get("until"), str):
            return None
        return datetime.fromisoformat(entry["until"]).timestamp()

    def set(self, stream: str, until: float) -> None:
        """Record ``stream``'s progress; other streams stay as the file has them now."""
        with _locked(self.path):
            self._streams = self._load()
            self._streams[stream] = {
                "until": utc_iso(until),
                "updated_at": utc_iso(datetime.now(UTC).timestamp()),
            }
            self._write()

    def _write(self) -> None:  # under _locked, which made the folder
        body = json.dumps({"version": VERSION, "streams": self._streams}, indent=2, sort_keys=True)
        handle, temporary = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent
        )
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(body + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        _fsync_folder(self.path.parent)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _lock(handle: IO[str]) -> None:
    """Take the exclusive lock on an open file, waiting for another agent's update to end."""
    if sys.platform == "win32":
        # stays: Windows only
        import msvcrt

        msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # retries for 10 s, then OSError
        return
    # stays: POSIX only
    import fcntl

    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold ``<path>.lock`` while the block runs; the system drops it if the process dies."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a", encoding="utf-8") as handle:
        _lock(handle)
        yield
