"""manage.py revoke_token TEAM NAME"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.teams.models import ApiToken
from aframes_web.teams.services import token_revoke


class Command(BaseCommand):
    help = "Revoke an API token by name; requests with it fail from now on."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("team")
        parser.add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        token = ApiToken.objects.filter(team__slug=options["team"], name=options["name"]).first()
        if token is None:
            raise CommandError(f"Team {options['team']!r} has no token {options['name']!r}.")
        token_revoke(token=token)
        self.stdout.write(f"Revoked token {token.name!r} of {options['team']}.")
