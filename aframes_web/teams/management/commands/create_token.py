"""manage.py create_token TEAM NAME --scopes read,write [--user USERNAME]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.teams.models import Membership, Team
from aframes_web.teams.services import TeamError, parse_scopes, token_create


class Command(BaseCommand):
    help = "Create an API token; its key is printed once and never stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("team")
        parser.add_argument("name", help="what the token is for, unique in the team")
        parser.add_argument(
            "--scopes",
            default="read",
            help="comma-separated: read, write, label, admin (default: read)",
        )
        parser.add_argument(
            "--user",
            help="the member the token acts for (a label token labels as this annotator)",
        )
        parser.add_argument("--quiet", action="store_true", help="print only the key")

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(slug=options["team"]).first()
        if team is None:
            raise CommandError(f"No team {options['team']!r}; create it with create_team.")
        user = None
        if options["user"]:
            found = Membership.objects.filter(
                team=team, user__username=options["user"]
            ).select_related("user")
            membership = found.first()
            if membership is None:
                raise CommandError(f"{options['user']!r} is no member of team {team.slug}.")
            user = membership.user
        try:
            issued = token_create(
                team=team,
                name=options["name"],
                scopes=parse_scopes(options["scopes"]),
                created_by=user,
            )
        except TeamError as err:
            raise CommandError(str(err)) from None
        if options["quiet"]:
            self.stdout.write(issued.key)
            return
        self.stdout.write(
            f"Token {issued.token.name!r} for {team.slug} with scopes "
            f"{', '.join(issued.token.scopes)}:\n\n    {issued.key}\n\n"
            "Store it now: only its hash is kept, it cannot be shown again."
        )
