"""manage.py cost_report --team T --entity KEY [--days N | --from D --to D] [--screen WxH]
[--fit-days N] --out DIR"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.activity.routines import (
    WINDOW_DAYS_DEFAULT,
    WINDOW_DAYS_MAX,
    WindowInvalid,
    cost_markdown,
    entity_cost,
)
from aframes_web.streams.selectors import entity_get
from aframes_web.teams.models import Team
from compiler.cost import DEFAULT_SCREEN, SCREENS


def _day(raw: str) -> date:
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise CommandError(f"{raw!r} is not a date like 2026-03-02.") from None


class Command(BaseCommand):
    help = (
        "Mine an entity's routines over a window of its stored desktop days and write the "
        "cost report (R_inject, R_info, h, hold-out, ceiling; Activity Frames §7.1-§7.4) as "
        "cost.json and cost.md in --out. Progress goes to stderr."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", required=True, help="The team's slug.")
        parser.add_argument("--entity", required=True, help="The desktop entity's key.")
        parser.add_argument(
            "--days",
            type=int,
            help=f"The last N days with activity (default {WINDOW_DAYS_DEFAULT}, at most "
            f"{WINDOW_DAYS_MAX}).",
        )
        parser.add_argument("--from", dest="start", type=_day, help="First local day.")
        parser.add_argument("--to", dest="end", type=_day, help="Last local day (inclusive).")
        parser.add_argument(
            "--screen",
            default=DEFAULT_SCREEN,
            choices=sorted(SCREENS),
            help=f"The screen C_agent models (default {DEFAULT_SCREEN}).",
        )
        parser.add_argument(
            "--fit-days",
            type=int,
            help="Hold-out: fit on the first N active days (default: the first half).",
        )
        parser.add_argument("--out", required=True, help="Folder for cost.json and cost.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(slug=options["team"]).first()
        if team is None:
            raise CommandError(f"No team {options['team']!r}; manage.py create_team makes one.")
        entity = entity_get(team=team, key=options["entity"])
        if entity is None:
            raise CommandError(f"Team {team.slug!r} has no entity {options['entity']!r}.")
        out = Path(options["out"])
        if out.exists() and not out.is_dir():
            raise CommandError(f"--out {out} is a file; give a folder.")

        def progress(index: int, total: int, day: date) -> None:
            self.stderr.write(f"compiling {day} ({index}/{total})")

        try:
            cost = entity_cost(
                entity=entity,
                days=options["days"],
                start=options["start"],
                end=options["end"],
                screen=options["screen"],
                fit_days=options["fit_days"],
                progress=progress,
            )
        except WindowInvalid as err:
            raise CommandError(str(err)) from None
        out.mkdir(parents=True, exist_ok=True)
        (out / "cost.json").write_text(json.dumps(cost, indent=1, ensure_ascii=False) + "\n")
        (out / "cost.md").write_text(cost_markdown(cost))
        action = cost["granularities"]["action"]
        self.stderr.write(
            f"{cost['window']['days']} days, {len(action['routines'])} action routines; "
            f"wrote {out / 'cost.json'} and {out / 'cost.md'}"
        )
