"""manage.py reconcile [--team SLUG] [--check] [--json]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.reconcile.services import reconcile
from aframes_web.teams.models import Team


class Command(BaseCommand):
    help = (
        "Hold every derived row (day summaries, compiled days, memory days, import jobs, "
        "benchmark runs) to the events, and repair what disagrees: recount, queue the compile "
        "or memory close again, resume or fail lost work. The beat runs it every "
        "AFRAMES_RECONCILE_INTERVAL_S. --check reports without repairing and exits 1 on drift."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", help="only this team (slug)")
        parser.add_argument(
            "--check", action="store_true", help="report only, repair nothing; exit 1 on drift"
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        team = None
        if options["team"]:
            team = Team.objects.filter(slug=options["team"]).first()
            if team is None:
                known = ", ".join(Team.objects.order_by("slug").values_list("slug", flat=True))
                raise CommandError(f"No team {options['team']!r}; teams: {known or 'none'}.")
        report = reconcile(team=team, repair=not options["check"])
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2))
        else:
            for drift in report.drifts:
                self.stdout.write(drift.line())
            checked = report.checked
            self.stdout.write(
                f"{len(report.drifts)} drift(s) in {checked['entities']} entities: "
                f"{checked['days']} days, {checked['compiled_days']} compiled days, "
                f"{checked['memory_days']} memory days, {checked['imports']} open import jobs, "
                f"{checked['runs']} running benchmark runs ({report.elapsed_ms:.0f} ms)"
                + ("" if report.repaired or not report.drifts else "; nothing repaired (--check)")
            )
        if options["check"] and report.drifts:
            raise SystemExit(1)
