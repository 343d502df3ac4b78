"""One sync pass: read past the checkpoint, apply privacy, send in batches, advance.

The checkpoint is the time below which the server has acknowledged every row. A pass starts
``overlap`` seconds before it (rows a recorder wrote late, a crash between a batch's ack and
the checkpoint write); source keys are deterministic, so what is sent again is only counted
by the server as duplicates and never stored twice.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from aframes_sync.checkpoint import Checkpoint
from aframes_sync.client import Ack, Client, Refused, Unavailable
from aframes_sync.privacy import Privacy
from aframes_sync.source import ActivityWatchServerSource, ScreenpipeSource
from compiler.sources import utc_iso
from compiler.sources._common import plural


class GaveUp(Exception):
    """The server stayed unreachable through every retry; ``pending`` rows were not sent."""

    def __init__(self, reason: str, pending: int, since: float | None) -> None:
        super().__init__(reason)
        self.pending = pending
        self.since = since


@dataclass
class Options:
    source: ScreenpipeSource | ActivityWatchServerSource
    entity: str
    url: str
    token: str
    checkpoint: Path
    batch_size: int = 1000
    overlap_s: float = 300.0
    include_text: bool = False
    deny_apps: list[str] = field(default_factory=list)
    deny_sites: list[str] = field(default_factory=list)
    dry_run: bool = False
    show: int = 5
    retries: int | None = 5  # None: retry forever (--follow)
    retry_base_s: float = 1.0
    max_backoff_s: float = 60.0
    max_batches: int | None = None
    create: tuple[str, str] | None = None  # (scope, timezone) for an entity that is missing
    timeout_s: float = 30.0


@dataclass
class Report:
    records: int = 0
    batches: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    ack: Ack = field(default_factory=Ack)
    stopped_early: bool = False
    until: float | None = None


class Agent:
    def __init__(
        self,
        options: Options,
        *,
        out: TextIO,
        err: TextIO,
        sleep: Callable[[float], None],
    ) -> None:
        self.options = options
        self.out = out
        self.err = err
        self.sleep = sleep
        self.client = Client(options.url, options.token, timeout=options.timeout_s)
        self.checkpoint = Checkpoint(options.checkpoint)
        # One checkpoint per (server, entity, source): a second server starts from scratch.
        self.stream = f"{self.client.url} {options.entity} {options.source.name}"
        self._created = False

    def _privacy(self) -> Privacy:
        o = self.options
        return Privacy.build(include_text=o.include_text, apps=o.deny_apps, sites=o.deny_sites)

    def run_pass(self) -> tuple[Report, Privacy]:
        """Send everything past the checkpoint; raises GaveUp or Refused on failure."""
        o = self.options
        privacy = self._privacy()
        report = Report()
        until = self.checkpoint.get(self.stream)
        report.until = until
        start = None if until is None else until - o.overlap_s
        windows = o.source.windows(start)
        shown = 0
        for low, high in windows:
            kept = [(t, r) for t, r in o.source.records(low, high) if privacy.keep(r)]
            report.records += len(kept)
            report.kinds.update(r["kind"] for _t, r in kept)
            if o.dry_run:
                report.batches += -(-len(kept) // o.batch_size)
                for _t, record in kept[: max(o.show - shown, 0)]:
                    print(json.dumps(record, ensure_ascii=False), file=self.out)
                    shown += 1
                continue
            for first in range(0, len(kept), o.batch_size):
                chunk = [r for _t, r in kept[first : first + o.batch_size]]
                try:
                    report.ack.add(self._send(chunk))
                except GaveUp as gave_up:
                    gave_up.pending = (len(kept) - first) + self._count(windows)
                    gave_up.since = until
                    raise
                rest = first + o.batch_size
                # Rows are sent in time order: everything before the next unsent row is acked.
                reached = kept[rest][0] if rest < len(kept) else high
                if until is None or reached > until:
                    self.checkpoint.set(self.stream, reached)
                    until = reached
                report.batches += 1
                if o.max_batches is not None and report.batches >= o.max_batches:
                    report.stopped_early = True
                    report.until = until
                    return report, privacy
            if not kept and (until is None or high > until):
                self.checkpoint.set(self.stream, high)  # nothing to send here is done too
                until = high
        report.until = until
        return report, privacy

    def _count(self, windows: Any) -> int:
        """Rows of the windows not read yet, after privacy (for the 'pending' line)."""
        privacy = self._privacy()
        return sum(
            sum(1 for _t, r in self.options.source.records(low, high) if privacy.keep(r))
            for low, high in windows
        )

    def _send(self, records: list[dict[str, Any]]) -> Ack:
        o = self.options
        attempt = 0
        while True:
            try:
                return self.client.post_events(o.entity, records)
            except Unavailable as problem:
                attempt += 1
                if o.retries is not None and attempt > o.retries:
                    raise GaveUp(str(problem), len(records), None) from None
                # Exponential backoff with jitter, so agents do not return in lockstep.
                delay = min(o.retry_base_s * 2 ** (attempt - 1), o.max_backoff_s)
                delay *= 0.5 + random.random() / 2  # jitter, not a secret
                limit = "" if o.retries is None else f" of {o.retries}"
                print(
                    f"aframes-sync: {problem}; retry {attempt}{limit} in {delay:.2f} s",
                    file=self.err,
                    flush=True,
                )
                self.sleep(delay)
            except Refused as refused:
                if refused.status == 404 and o.create is not None and not self._created:
                    self.client.create_entity(o.entity, *o.create)
                    self._created = True
                    print(f"aframes-sync: created entity {o.entity!r}.", file=self.err)
                    continue
                if refused.status == 413 and len(records) > 1:
                    # Over the server's limits: halve until each part fits.
                    middle = len(records) // 2
                    ack = self._send(records[:middle])
                    ack.add(self._send(records[middle:]))
                    return ack
                raise


def describe(report: Report, privacy: Privacy, *, dry_run: bool) -> str:
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(report.kinds.items()))
    parts = []
    if dry_run:
        parts.append(
            f"dry run: would send {plural(report.records, 'record')} in "
            f"{plural(report.batches, 'batch', 'batches')}"
            + (f" ({kinds})" if kinds else "")
            + "; nothing was sent and the checkpoint is unchanged"
        )
    else:
        parts.append(
            f"sent {plural(report.records, 'record')} in "
            f"{plural(report.batches, 'batch', 'batches')}: "
            f"{report.ack.accepted} accepted, {report.ack.duplicates} "
            + ("duplicate" if report.ack.duplicates == 1 else "duplicates")
        )
        if report.ack.dropped_text_fields:
            parts.append(
                "the server did not store " + plural(report.ack.dropped_text_fields, "text field")
            )
    parts.append(
        f"typed text removed from {privacy.text_removed} inputs"
        if not privacy.include_text
        else "typed text included (--include-text)"
    )
    if privacy.denied_app or privacy.denied_site:
        parts.append(
            f"left out {privacy.denied_app} rows of denied apps and "
            f"{privacy.denied_site} of denied sites"
        )
    if not dry_run and report.until is not None:
        parts.append(f"acknowledged up to {utc_iso(report.until)}")
    return "aframes-sync: " + "; ".join(parts) + "."
