"""manage.py load_demo: the demo team, a login, a token and synthetic desktop days (idempotent)."""

from __future__ import annotations

import secrets
from datetime import date
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from aframes_web.streams.importers import SourceItem
from aframes_web.streams.importing import import_items
from aframes_web.streams.selectors import entity_get
from aframes_web.streams.services import entity_create
from aframes_web.teams.models import ApiToken, Role, Team
from aframes_web.teams.services import member_add, team_create, token_create, user_get_or_create
from benchmark.synthetic.desktop import generate_days

DEMO_TEAM = "demo"
DEMO_USER = "demo"
DEMO_ENTITY = "demo-desktop"
DEMO_TZ = "Europe/Berlin"
# Fixed dates and seed so every machine loads the same demo days.
DEMO_START = date(2026, 3, 2)
DEMO_DAYS = 5
DEMO_SEED = 20260302


class Command(BaseCommand):
    help = "Create the demo team, user and token, and load synthetic desktop days (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=DEMO_DAYS)

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(slug=DEMO_TEAM).first() or team_create(
            slug=DEMO_TEAM, name="Demo team"
        )
        secrets_dir = settings.VAR_DIR
        password_file = secrets_dir / "demo_password"
        if not password_file.exists():
            password_file.write_text(secrets.token_urlsafe(12))
            password_file.chmod(0o600)
        password = password_file.read_text().strip()
        user = user_get_or_create(username=DEMO_USER, password=password)
        member_add(team=team, user=user, role=Role.OWNER)
        token_file = secrets_dir / "demo_token"
        if (
            not token_file.exists()
            or not ApiToken.objects.filter(team=team, name="demo", revoked_at=None).exists()
        ):
            ApiToken.objects.filter(team=team, name="demo").delete()
            issued = token_create(team=team, name="demo", scopes=["read", "write", "label"])
            token_file.write_text(issued.key)
            token_file.chmod(0o600)
        entity = entity_get(team=team, key=DEMO_ENTITY) or entity_create(
            team=team,
            key=DEMO_ENTITY,
            scope="desktop",
            name="Demo desktop (synthetic)",
            timezone_name=DEMO_TZ,
        )
        records = generate_days(DEMO_START, options["days"], seed=DEMO_SEED, tz=DEMO_TZ)
        items = (SourceItem(f"synthetic:{n}", item=r) for n, r in enumerate(records, 1))
        summary = import_items(entity=entity, items=items)
        self.stdout.write(
            f"Demo data: {options['days']} synthetic desktop days from "
            f"{DEMO_START.isoformat()} for {team.slug}/{entity.key}: "
            f"{summary.imported:,} new events, {summary.duplicates:,} already there.\n"
            f"  login:     {DEMO_USER} / {password}   (stored in {password_file})\n"
            f"  API token: {token_file.read_text().strip()}   (stored in {token_file})"
        )
