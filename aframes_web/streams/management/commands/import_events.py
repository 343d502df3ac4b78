"""manage.py import_events FORMAT PATH --team T --entity KEY [--scope S] [--tz Z] [--strict]"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.streams.importers import formats
from aframes_web.streams.importing import (
    ImportAborted,
    ImportFailed,
    ImportRefused,
    ImportSummary,
    describe,
    import_plan,
    run_import,
)
from aframes_web.streams.models import Entity
from aframes_web.streams.records import SCOPES
from aframes_web.teams.models import Team


class Progress:
    """A one-line progress bar on stderr (a line every few seconds when not a terminal)."""

    def __init__(self, reader: Any, total: int, stream: Any) -> None:
        self.reader, self.total, self.stream = reader, max(total, 1), stream
        self.tty = stream.isatty()
        self.started = self.last = time.monotonic()

    def __call__(self, summary: ImportSummary) -> None:
        now = time.monotonic()
        if not self.tty and now - self.last < 5:
            return
        self.last = now
        share = min(self.reader.bytes_read / self.total, 1.0)
        bar = "#" * int(share * 30)
        rate = summary.read / max(now - self.started, 1e-6)
        line = (
            f"[{bar:<30}] {share:6.1%}  {summary.read:,} read, {summary.imported:,} new, "
            f"{summary.duplicates:,} dup, {sum(summary.rejected.values()):,} bad  "
            f"{rate:,.0f}/s"
        )
        self.stream.write(("\r" + line) if self.tty else (line + "\n"))
        self.stream.flush()

    def done(self) -> None:
        if self.tty:
            self.stream.write("\n")


class Command(BaseCommand):
    help = "Import events from a file into one entity (idempotent; bad lines are reported)."

    def add_arguments(self, parser: CommandParser) -> None:
        known = formats()
        parser.add_argument(
            "format",
            choices=sorted(known),
            help="; ".join(f"{name}: {spec.description}" for name, spec in sorted(known.items())),
        )
        parser.add_argument("path", type=Path)
        parser.add_argument("--team", required=True, help="team slug")
        parser.add_argument(
            "--entity",
            required=True,
            help="entity key (created if missing); for multi-entity formats the prefix of "
            "<entity>:<id> keys",
        )
        parser.add_argument("--scope", choices=SCOPES, help="scope of a new entity")
        parser.add_argument("--tz", help="IANA time zone (required for formats without offsets)")
        parser.add_argument("--name", help="display name of a new entity")
        parser.add_argument("--strict", action="store_true", help="stop at the first bad line")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")
        parser.add_argument("--batch-size", type=int, default=5000)

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        team = Team.objects.filter(slug=options["team"]).first()
        if team is None:
            raise CommandError(f"No team {options['team']!r}; create it with create_team.")
        created: list[Entity] = []
        try:
            plan = import_plan(
                team=team,
                format_name=options["format"],
                path=path,
                entity_key=options["entity"],
                scope=options["scope"],
                tz=options["tz"],
                name=options["name"],
                created=created,
            )
        except ImportRefused as err:
            raise CommandError(str(err)) from None
        progress = Progress(plan.reader, plan.size, sys.stderr)
        try:
            summary = run_import(
                plan,
                strict=options["strict"],
                batch_size=options["batch_size"],
                progress=progress,
                pipeline=True,
            )
        except ImportAborted as stop:
            progress.done()
            raise CommandError(f"Stopped at the first bad line (--strict): {stop}") from None
        except (ImportRefused, ImportFailed) as err:
            progress.done()
            raise CommandError(str(err)) from None
        progress.done()
        for entity in created:
            self.stderr.write(f"Created {entity.scope} entity {entity.key!r} ({entity.timezone}).")
        for problem in summary.problems:
            self.stderr.write(f"  skipped {problem}")
        if options["json"]:
            self.stdout.write(json.dumps(summary.as_dict()))
            return
        self.stdout.write(
            describe(summary, path.name, f"{team.slug}/{options['entity']}", plan.multi_entity)
        )
