"""manage.py import_events FORMAT PATH --team T --entity KEY [--scope S] [--tz Z] [--strict]"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.streams.importers import formats
from aframes_web.streams.importing import ImportAborted, ImportSummary, import_items
from aframes_web.streams.records import SCOPES
from aframes_web.streams.selectors import entity_get
from aframes_web.streams.services import EntityError, check_timezone, entity_create
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
        parser.add_argument("format", choices=sorted(formats()), help="file format")
        parser.add_argument("path", type=Path)
        parser.add_argument("--team", required=True, help="team slug")
        parser.add_argument("--entity", required=True, help="entity key (created if missing)")
        parser.add_argument("--scope", choices=SCOPES, help="scope for a new entity")
        parser.add_argument("--tz", help="IANA time zone of a new entity (default UTC)")
        parser.add_argument("--name", help="display name of a new entity")
        parser.add_argument("--strict", action="store_true", help="stop at the first bad line")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")
        parser.add_argument("--batch-size", type=int, default=5000)

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path} is not a readable file.")
        team = Team.objects.filter(slug=options["team"]).first()
        if team is None:
            raise CommandError(f"No team {options['team']!r}; create it with create_team.")
        entity = entity_get(team=team, key=options["entity"])
        if entity is None:
            if not options["scope"]:
                raise CommandError(
                    f"Team {team.slug!r} has no entity {options['entity']!r}; "
                    "pass --scope (and --tz) to create it."
                )
            try:
                entity = entity_create(
                    team=team,
                    key=options["entity"],
                    scope=options["scope"],
                    name=options["name"],
                    timezone_name=options["tz"] or "UTC",
                )
            except EntityError as err:
                raise CommandError(str(err)) from None
            self.stderr.write(f"Created {entity.scope} entity {entity.key!r} ({entity.timezone}).")
        else:
            if options["scope"] and options["scope"] != entity.scope:
                raise CommandError(
                    f"Entity {entity.key!r} is a {entity.scope} entity, not {options['scope']}."
                )
            if options["tz"]:
                check_timezone(options["tz"])
                if options["tz"] != entity.timezone:
                    raise CommandError(
                        f"Entity {entity.key!r} uses time zone {entity.timezone}, "
                        f"not {options['tz']}."
                    )
        reader = formats()[options["format"]](path)
        progress = Progress(reader, path.stat().st_size, sys.stderr)
        try:
            summary = import_items(
                entity=entity,
                items=reader,
                strict=options["strict"],
                batch_size=options["batch_size"],
                progress=progress,
            )
        except ImportAborted as stop:
            progress.done()
            raise CommandError(f"Stopped at the first bad line (--strict): {stop}") from None
        progress.done()
        for problem in summary.problems:
            self.stderr.write(f"  skipped {problem}")
        if options["json"]:
            self.stdout.write(json.dumps(summary.as_dict()))
            return
        rejected = ", ".join(f"{k}: {v}" for k, v in sorted(summary.rejected.items()))
        self.stdout.write(
            f"{path.name} -> {team.slug}/{entity.key}: read {summary.read:,}, "
            f"imported {summary.imported:,}, duplicates {summary.duplicates:,}, "
            f"rejected {sum(summary.rejected.values()):,}"
            + (f" ({rejected})" if rejected else "")
            + (
                f", text fields dropped {summary.dropped_text_fields:,}"
                if summary.dropped_text_fields
                else ""
            )
        )
