"""manage.py memory_close --team SLUG [--entity KEY] [--rebuild]"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.activity.services import compiles_pending_run
from aframes_web.streams.models import Entity
from aframes_web.streams.services import entity_days_rebuild
from memory.selectors import memory_summary
from memory.services.closing import days_due, memory_close_due, memory_rebuild


class Command(BaseCommand):
    help = (
        "Close the complete days of entities in memory now (trajectories, replay, lifecycle), "
        "oldest first; with --rebuild, drop their derived memory and build it again from the "
        "events. Decisions are kept either way."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", required=True, help="team slug")
        parser.add_argument("--entity", help="one entity key (default: every entity)")
        parser.add_argument(
            "--rebuild", action="store_true", help="drop trajectories and regularities first"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        entities = Entity.objects.filter(team__slug=options["team"]).order_by("key")
        if options["entity"]:
            entities = entities.filter(key=options["entity"])
        if not entities.exists():
            raise CommandError(
                f"No entity {options['entity']!r} in team {options['team']!r}."
                if options["entity"]
                else f"Team {options['team']!r} has no entities (or does not exist)."
            )
        for entity in entities:
            # Done here, not left to a worker: the day summaries memory reads, and the compiles
            # desktop days wait for (an import from the command line queues both for a worker).
            entity_days_rebuild(entity_id=entity.pk)
            if entity.scope == Entity.Scope.DESKTOP:
                compiled = compiles_pending_run(entity=entity)
                if compiled:
                    self.stdout.write(f"{entity.key}: compiled {len(compiled)} pending day(s)")
            due = len(days_due(entity, by_clock=True))
            began = time.perf_counter()
            if options["rebuild"]:
                closed = memory_rebuild(entity=entity)
            else:
                self.stdout.write(f"{entity.key}: {due} day(s) to close")
                closed = memory_close_due(entity_id=entity.pk, by_clock=True)
            took = time.perf_counter() - began
            summary = memory_summary(entity)
            states = ", ".join(f"{n} {s}" for s, n in sorted(summary["regularities"].items()))
            self.stdout.write(
                f"{entity.key}: closed {len(closed)} day(s) in {took:.1f} s; "
                f"{summary['closed_days']} closed in all; regularities: {states or 'none'}"
            )
