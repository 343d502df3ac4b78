"""manage.py add_member TEAM USERNAME ROLE [--password P]"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.teams.models import Role, Team
from aframes_web.teams.services import TeamError, member_add, user_get_or_create


class Command(BaseCommand):
    help = "Add a user to a team with a role (creating the user if needed)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("team")
        parser.add_argument("username")
        parser.add_argument("role", choices=Role.values)
        parser.add_argument("--password", help="set this password (else unchanged / unusable)")

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(slug=options["team"]).first()
        if team is None:
            raise CommandError(f"No team {options['team']!r}; create it with create_team.")
        password = options["password"]
        if password is not None:
            # The same validators as a password change (settings.AUTH_PASSWORD_VALIDATORS),
            # checked before anything is created.
            user_model = get_user_model()
            probe = user_model.objects.filter(username=options["username"]).first()
            try:
                validate_password(password, probe or user_model(username=options["username"]))
            except ValidationError as err:
                raise CommandError("The password is refused: " + " ".join(err.messages)) from None
        user = user_get_or_create(username=options["username"], password=password)
        try:
            membership = member_add(team=team, user=user, role=options["role"])
        except TeamError as err:
            raise CommandError(str(err)) from None
        self.stdout.write(f"{user} is {membership.role} of {team.slug}.")
