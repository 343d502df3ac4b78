"""manage.py create_team SLUG [--name NAME]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.teams.services import TeamError, team_create


class Command(BaseCommand):
    help = "Create a team."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="short unique id: lowercase letters, digits, hyphens")
        parser.add_argument("--name", help="display name (defaults to the slug)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            team = team_create(slug=options["slug"], name=options["name"])
        except TeamError as err:
            raise CommandError(str(err)) from None
        self.stdout.write(f"Created team {team.slug!r} ({team.name}).")
