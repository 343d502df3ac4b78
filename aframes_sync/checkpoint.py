"""The agent's checkpoint: per stream, the UTC time below which the server has everything.

One small JSON file, rewritten atomically (temporary file in the same folder, fsync,
``os.replace``), so a crash or a power cut leaves either the old or the new checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
        self._streams: dict[str, dict[str, Any]] = {}
        if path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                streams = data["streams"]
                if not isinstance(streams, dict):
                    raise TypeError("streams is not an object")
            except (OSError, ValueError, KeyError, TypeError) as err:
                raise CheckpointError(
                    f"{path}: not a checkpoint this agent wrote ({err}); move it away to "
                    "start over (re-sending is harmless: the server counts duplicates)."
                ) from None
            self._streams = streams

    def get(self, stream: str) -> float | None:
        entry = self._streams.get(stream)
        if not isinstance(entry, dict) or not isinstance(entry.get("until"), str):
            return None
        return datetime.fromisoformat(entry["until"]).timestamp()

    def set(self, stream: str, until: float) -> None:
        self._streams[stream] = {
            "until": utc_iso(until),
            "updated_at": utc_iso(datetime.now(UTC).timestamp()),
        }
        self._write()

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
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
