"""manage.py compile_pending [--dry-run]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from aframes_web.activity.services import compiles_stuck
from aframes_web.pipeline.tasks import dispatch_compiles
from aframes_web.streams.models import Entity


class Command(BaseCommand):
    help = (
        "Queue the compiles of days whose requests no compile has covered and none is on its "
        "way (a lost message, a broker outage, a task that gave up). Beat runs this every 5 min."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="list them, queue nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        stuck = compiles_stuck()
        names = dict(Entity.objects.filter(pk__in={e for e, _ in stuck}).values_list("pk", "key"))
        for entity_id, day in stuck:
            self.stdout.write(f"  {names.get(entity_id, entity_id)} {day.isoformat()}")
        if not options["dry_run"]:
            dispatch_compiles(stuck)
        verb = "would queue" if options["dry_run"] else "queued"
        self.stdout.write(f"{verb} {len(stuck)} compile(s).")
