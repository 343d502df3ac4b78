"""manage.py import_events FORMAT PATH --team T --entity KEY [--scope S] [--tz Z] [--strict]"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.streams.importers import SourceItem, formats
from aframes_web.streams.importing import ImportAborted, ImportSummary, import_items
from aframes_web.streams.models import Entity
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

    def _entity(self, team: Team, key: str, scope: str, tz: str | None, name: str | None) -> Entity:
        entity = entity_get(team=team, key=key)
        if entity is not None:
            if entity.scope != scope:
                raise CommandError(f"Entity {key!r} is a {entity.scope} entity, not {scope}.")
            if tz and tz != entity.timezone:
                raise CommandError(f"Entity {key!r} uses time zone {entity.timezone}, not {tz}.")
            return entity
        try:
            entity = entity_create(
                team=team, key=key, scope=scope, name=name, timezone_name=tz or "UTC"
            )
        except EntityError as err:
            raise CommandError(str(err)) from None
        self.stderr.write(f"Created {entity.scope} entity {entity.key!r} ({entity.timezone}).")
        return entity

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        spec = formats()[options["format"]]
        if not path.exists():
            raise CommandError(f"{path} does not exist.")
        team = Team.objects.filter(slug=options["team"]).first()
        if team is None:
            raise CommandError(f"No team {options['team']!r}; create it with create_team.")
        tz = options["tz"]
        if tz:
            try:
                check_timezone(tz)
            except EntityError as err:
                raise CommandError(str(err)) from None
        if spec.scope and options["scope"] and options["scope"] != spec.scope:
            raise CommandError(f"{spec.name} files hold {spec.scope} data, not {options['scope']}.")
        scope = spec.scope or options["scope"]
        prefix = options["entity"]
        route = None
        entity = None
        if spec.multi_entity:
            if spec.needs_tz and not tz:
                raise CommandError(f"{spec.name} files have no time zone: pass --tz.")
            entities: dict[str, Entity] = {}

            def route(item: SourceItem) -> Entity:
                key = f"{prefix}:{item.entity}"
                if key not in entities:
                    entities[key] = self._entity(team, key, scope, tz, None)
                return entities[key]
        else:
            existing = entity_get(team=team, key=prefix)
            if existing is None and not scope:
                raise CommandError(
                    f"Team {team.slug!r} has no entity {prefix!r}; pass --scope (and --tz) "
                    "to create it."
                )
            if existing is not None and not tz:
                tz = existing.timezone if spec.needs_tz else None
            if spec.needs_tz and not tz:
                raise CommandError(f"{spec.name} files have no time zone: pass --tz.")
            entity = self._entity(
                team, prefix, scope or existing.scope, options["tz"], options["name"]
            )
        zone = ZoneInfo(tz) if tz else None
        try:
            reader = spec.factory(path, zone)
        except (OSError, ValueError) as err:
            raise CommandError(f"{path}: {err}") from None
        size = (
            path.stat().st_size
            if path.is_file()
            else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        )
        progress = Progress(reader, size, sys.stderr)
        try:
            summary = import_items(
                entity=entity,
                route=route,
                items=reader,
                strict=options["strict"],
                batch_size=options["batch_size"],
                progress=progress,
            )
        except ImportAborted as stop:
            progress.done()
            raise CommandError(f"Stopped at the first bad line (--strict): {stop}") from None
        progress.done()
        summary.notes.extend(getattr(reader, "notes", []))
        for problem in summary.problems:
            self.stderr.write(f"  skipped {problem}")
        if options["json"]:
            self.stdout.write(json.dumps(summary.as_dict()))
            return
        rejected = ", ".join(f"{k}: {v}" for k, v in sorted(summary.rejected.items()))
        where = f"{team.slug}/{prefix}" + (":*" if spec.multi_entity else "")
        self.stdout.write(
            f"{path.name} -> {where}: read {summary.read:,}, "
            f"imported {summary.imported:,}, duplicates {summary.duplicates:,}, "
            f"rejected {sum(summary.rejected.values()):,}"
            + (f" ({rejected})" if rejected else "")
            + (
                f", text fields dropped {summary.dropped_text_fields:,}"
                if summary.dropped_text_fields
                else ""
            )
        )
        if spec.multi_entity:
            for key, count in sorted(summary.per_entity.items()):
                self.stdout.write(f"  {key}: {count:,} new")
        for note in summary.notes:
            self.stdout.write(f"  note: {note}")
