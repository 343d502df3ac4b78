"""manage.py certify [--team SLUG] [--entity KEY] [--days N] [--json]"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.activity.certify import (
    COST_GROWTH_MAX,
    COST_NOISE_MS,
    MIN_DAYS_FOR_TREND,
    EntityCertificate,
    certify_entity,
)
from aframes_web.streams.models import Entity


def _mark(ok: bool) -> str:
    return "ok" if ok else "FAIL"


class Command(BaseCommand):
    help = (
        "Check the compiled day documents: byte-identical recompiles (generated_at excluded), "
        "rebuild equals the incremental documents, append-only history, and compile cost "
        "against history. Exit 0 on PASS, 1 on FAIL."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", help="Only this team's entities (slug).")
        parser.add_argument("--entity", help="Only this entity (key); with --team if ambiguous.")
        parser.add_argument("--days", type=int, help="Only the last N days with events.")
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["days"] is not None and options["days"] < 1:
            raise CommandError("--days must be at least 1.")
        entities = Entity.objects.filter(scope=Entity.Scope.DESKTOP).select_related("team")
        if options["team"]:
            entities = entities.filter(team__slug=options["team"])
        if options["entity"]:
            entities = entities.filter(key=options["entity"])
        chosen = list(entities.order_by("team__slug", "key"))
        if not chosen:
            where = " ".join(
                f"{name} {options[name]!r}" for name in ("team", "entity") if options[name]
            )
            raise CommandError(
                f"No desktop entity to certify{' for ' + where if where else ''}; "
                "only desktop entities have compiled documents."
            )
        reports = [certify_entity(entity, last_days=options["days"]) for entity in chosen]
        passed = all(r.passed for r in reports)
        if options["json"]:
            payload = {"passed": passed, "entities": [r.as_dict() for r in reports]}
            self.stdout.write(json.dumps(payload, indent=2))
        else:
            for report in reports:
                self._print(report)
            self.stdout.write(f"certify: {'PASS' if passed else 'FAIL'}")
        if not passed:
            sys.exit(1)

    def _print(self, report: EntityCertificate) -> None:
        write = self.stdout.write
        write(f"{report.entity} ({report.timezone}): {len(report.days)} days")
        write(f"  {'day':<10}  {'events':>7}  recompile  rebuild  append-only  {'ms':>7}  versions")
        for day in report.days:
            write(
                f"  {day.day:<10}  {day.events:>7,}  {_mark(day.recompile):<9}  "
                f"{_mark(day.rebuild):<7}  {_mark(day.append_only):<11}  "
                f"{day.compile_ms:>7.1f}  {day.versions:>8}"
            )
            for problem in day.problems:
                write(f"      {day.day}: {problem}")
        if len(report.days) < MIN_DAYS_FOR_TREND:
            write(
                f"  cost: median {report.median_ms} ms/day; too few days to compare the first "
                f"half with the second (needs {MIN_DAYS_FOR_TREND})"
            )
        else:
            write(
                f"  cost: median {report.median_ms} ms/day; mean {report.first_half_mean_ms} ms "
                f"(first half) vs {report.second_half_mean_ms} ms (second half): "
                f"{'flat' if report.cost_flat else 'GROWS'} (limit {COST_GROWTH_MAX}x or "
                f"+{COST_NOISE_MS:.0f} ms)"
            )
        write("  generated_at: excluded from every comparison (the one field allowed to differ)")
        write(f"  {report.entity}: {'PASS' if report.passed else 'FAIL'}")
