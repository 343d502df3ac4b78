"""manage.py load_demo: the demo team, a login, a token, synthetic desktop days, a synthetic
home whose memory has routines and decisions to show, a labelling project on that home with
two annotators and an adjudicator, and a ProactiveStream run on it (idempotent)."""

from __future__ import annotations

import secrets
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from aframes_web.annotation import selectors as sel
from aframes_web.annotation.models import LabelProject
from aframes_web.annotation.services import LabelInput, ProjectSpec, label_submit, project_create
from aframes_web.proactivestream.models import BenchmarkRun, DecisionPoint
from aframes_web.proactivestream.services import points_build, run_create, run_execute
from aframes_web.streams.importers import SourceItem
from aframes_web.streams.importing import import_items
from aframes_web.streams.selectors import entity_get
from aframes_web.streams.services import entity_create, entity_days_refresh
from aframes_web.teams.models import ApiToken, Role, Team
from aframes_web.teams.services import member_add, team_create, token_create, user_get_or_create
from benchmark.synthetic.desktop import generate_days
from benchmark.synthetic.memory_streams import ZONES, generate, local_day
from memory.selectors import memory_summary
from memory.services.closing import memory_close_due
from memory.services.deciding import decide_batch

DEMO_TEAM = "demo"
DEMO_USER = "demo"
DEMO_ENTITY = "demo-desktop"
DEMO_TZ = "Europe/Berlin"
# Fixed dates and seed so every machine loads the same demo days.
DEMO_START = date(2026, 3, 2)
DEMO_DAYS = 5
DEMO_SEED = 20260302
# A home (SYNTHETIC, benchmark.synthetic.memory_streams): four weeks imported, then its last day
# decided event by event, so its memory pages show trajectories, regularities and decisions.
DEMO_HOME = "demo-home"
DEMO_HOME_DAYS = 28
DEMO_HOME_START = date(2025, 12, 31)  # so that the last day is Tuesday 27 January 2026
# The labelling project: the home's last two days, two labels per point, the rule's triage.
DEMO_PROJECT = "Demo home, last two days"
DEMO_ANNOTATORS = ("demo-ana", "demo-ben")
DEMO_ADJUDICATOR = "demo-adi"
DEMO_LABELLED = 24  # points each demo annotator has labelled already


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
        home = self._home(team)
        labelling = self._labelling(team, password)
        benchmark = self._benchmark(team)
        records = generate_days(DEMO_START, options["days"], seed=DEMO_SEED, tz=DEMO_TZ)
        items = (SourceItem(f"synthetic:{n}", item=r) for n, r in enumerate(records, 1))
        summary = import_items(entity=entity, items=items)
        self.stdout.write(
            f"Demo data: {options['days']} synthetic desktop days from "
            f"{DEMO_START.isoformat()} for {team.slug}/{entity.key}: "
            f"{summary.imported:,} new events, {summary.duplicates:,} already there.\n"
            f"{home}\n{labelling}\n{benchmark}\n"
            f"  login:     {DEMO_USER} / {password}   (stored in {password_file})\n"
            f"  API token: {token_file.read_text().strip()}   (stored in {token_file})"
        )

    def _labelling(self, team: Team, password: str) -> str:
        for name in DEMO_ANNOTATORS:
            member_add(
                team=team,
                user=user_get_or_create(username=name, password=password),
                role=Role.ANNOTATOR,
            )
        adjudicator = user_get_or_create(username=DEMO_ADJUDICATOR, password=password)
        member_add(team=team, user=adjudicator, role=Role.ADJUDICATOR)
        project = LabelProject.objects.filter(team=team, name=DEMO_PROJECT).first()
        if project is None:
            home = entity_get(team=team, key=DEMO_HOME)
            assert home is not None
            points_build(entity=home)
            last = DecisionPoint.objects.filter(entity=home).order_by("-at").first()
            assert last is not None
            spec = ProjectSpec(
                name=DEMO_PROJECT,
                scope="home",
                entities=[DEMO_HOME],
                starts_at=last.at - timedelta(days=2),
                labels_per_point=2,
                triage="rule",
            )
            project = project_create(team=team, spec=spec, build=False)
            self._first_labels(project)
        return (
            f"Demo labelling project {project.pk} ({project.name}, "
            f"{project.tasks.count()} points): annotators {', '.join(DEMO_ANNOTATORS)}, "
            f"adjudicator {DEMO_ADJUDICATOR}, same password as the demo login"
        )

    def _first_labels(self, project: Any) -> None:
        """Both demo annotators label the first points (SYNTHETIC labels, so the workbench's
        pages have agreement and finals to show): abstain, except at the first point where a
        door moved, at which demo-ana calls for check_device and demo-ben abstains, which leaves
        that point for the adjudicator."""

        stream = project.streams.get()
        for place in stream.assignments.select_related("annotator").order_by("annotator__username"):
            user = place.annotator
            disputed = False
            for _ in range(DEMO_LABELLED):
                task = sel.current_task(project, user)
                if task is None:
                    break
                given = LabelInput("abstain", rationale="nothing new since the last point")
                moved = (task.point.public or {}).get("devices")
                if moved and not disputed:
                    disputed = True
                    if user.get_username() == DEMO_ANNOTATORS[0]:
                        given = LabelInput(
                            "intervene",
                            "check_device",
                            new_episode="door at night",
                            rationale="a door opened at an unusual hour",
                        )
                    else:
                        given = LabelInput(
                            "abstain", rationale="opened and closed again: nothing left open"
                        )
                label_submit(task=task, user=user, given=given)

    def _benchmark(self, team: Team) -> str:
        """A ProactiveStream run on the demo home (ProactMem against event_only, with the
        threshold curve), run inline so its page and the documented examples have figures."""
        run = BenchmarkRun.objects.filter(team=team).order_by("pk").first()
        if run is None:
            created = run_create(
                team=team,
                scope="home",
                methods=["proactmem", "event_only"],
                entities=[DEMO_HOME],
                enqueue=False,
                curve=True,
            )
            run = run_execute(run_id=created.pk) or created
        figures = ((run.results or {}).get("scopes") or {}).get("home") or {}
        shown = "; ".join(
            f"{name} {f.get('interventions', 0)} interventions, intrusion {f.get('intrusion')}"
            for name, f in figures.items()
        )
        positives = next(iter(figures.values()), {}).get("positives", 0)
        return (
            f"Demo benchmark run {run.pk} on {DEMO_HOME} ({run.status}): {positives} labelled "
            f"opportunit{'y' if positives == 1 else 'ies'}; {shown or 'no figures'}"
        )

    def _home(self, team: Team) -> str:
        entity = entity_get(team=team, key=DEMO_HOME) or entity_create(
            team=team,
            key=DEMO_HOME,
            scope="home",
            name="Demo home (synthetic)",
            timezone_name=ZONES["home"],
        )
        items = generate("home", days=DEMO_HOME_DAYS, seed=DEMO_SEED, start=DEMO_HOME_START)
        last = max(local_day(i, "home") for i in items)
        history = [i for i in items if local_day(i, "home") < last]
        located = (SourceItem(f"synthetic-home:{n}", item=r) for n, r in enumerate(history, 1))
        imported = import_items(entity=entity, items=located)
        # Summaries and day closes inline (no worker may be running yet), so the last day is
        # decided on three closed weeks.
        days = sorted({local_day(i, "home").isoformat() for i in history})
        entity_days_refresh(entity_id=entity.pk, days=days)
        memory_close_due(entity_id=entity.pk)
        # The last day through decide: each event decided on the memory before it (and the
        # four weeks before it closed first, inline).
        decided = decide_batch(
            entity=entity, items=[i for i in items if local_day(i, "home") == last]
        )
        summary = memory_summary(entity)
        states = ", ".join(f"{n} {s}" for s, n in sorted(summary["regularities"].items()))
        return (
            f"Demo home: {DEMO_HOME_DAYS} synthetic days for {team.slug}/{entity.key}: "
            f"{imported.imported:,} events imported, {sum(r.created for r in decided)} decided "
            f"on the last day ({summary['interventions']} interventions); "
            f"{summary['closed_days']} days in memory, regularities: {states or 'none'}"
        )
