"""The part of ``make bench-qa`` (``perf.qa``) that runs inside Django, once that module has set
it up on a scratch SQLite instance: the SYNTHETIC demo days imported and compiled, then
``manage.py qa_benchmark`` with no answerer."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management import call_command

from aframes_web.celery import app
from aframes_web.dashboard.management.commands.load_demo import DEMO_SEED, DEMO_START, DEMO_TZ
from aframes_web.streams.importers import SourceItem
from aframes_web.streams.importing import import_items
from aframes_web.streams.services import entity_create
from aframes_web.teams.services import team_create
from benchmark.synthetic.desktop import generate_days


def run(days: int, out: Path) -> None:
    """Import ``days`` demo days into a fresh team and write the QA report to ``out``."""
    call_command("migrate", "--noinput", verbosity=0)
    app.conf.task_always_eager = True  # the compiles run inline, as the worker would
    team = team_create(slug="bench", name="Bench")
    entity = entity_create(team=team, key="demo-desktop", scope="desktop", timezone_name=DEMO_TZ)
    print(f"importing {days} SYNTHETIC demo days ...", file=sys.stderr)
    records = generate_days(DEMO_START, days, seed=DEMO_SEED, tz=DEMO_TZ)
    import_items(
        entity=entity,
        items=(SourceItem(f"synthetic:{n}", item=r) for n, r in enumerate(records, 1)),
    )
    call_command(
        "qa_benchmark",
        "--team",
        "bench",
        "--entity",
        "demo-desktop",
        "--days",
        str(days),
        "--out",
        str(out),
    )
