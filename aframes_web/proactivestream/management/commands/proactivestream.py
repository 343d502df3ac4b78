"""``manage.py proactivestream build|run``: decision points and benchmark runs from the shell.

manage.py proactivestream build --team T --scope S [--entity KEY ...]
manage.py proactivestream run --team T --scope S|all [--entity KEY ...] [--methods a,b|all]
    [--labels labeler|labeler@N|jsonl:PATH|project:ID] [--no-control] [--synthetic KEY ...]
    [--false-alarm-cost C] [--curve] --out DIR
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.proactivestream.services import (
    RunConfigError,
    points_build,
    run_create,
    run_entities,
    run_execute,
)
from aframes_web.teams.models import Team
from benchmark.methods.registry import DEFAULT_METHODS
from benchmark.report import markdown
from memory.engine.decide import DEFAULT_FALSE_ALARM_COST, DEFAULT_THRESHOLD


class StreamProgress:
    """One progress bar per stream on stderr (a line every few seconds when not a terminal).

    The rate counts the points decided since the stream's first report over the time since
    then, and is shown once that time is long enough to mean something (:data:`RATE_AFTER_S`):
    the first report comes after its first point, so a rate from it alone would be absurd.
    """

    RATE_AFTER_S = 0.2

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.current: str | None = None
        self.last = 0.0
        self.started = time.monotonic()
        self.first = 0  # points done at the stream's first report

    def __call__(self, entity: str, done: int, total: int) -> None:
        now = time.monotonic()
        if entity != self.current:
            if self.current is not None and self.tty:
                self.stream.write("\n")
            self.current, self.started, self.last, self.first = entity, now, 0.0, done
        if not self.tty and now - self.last < 5 and done != total:
            return
        self.last = now
        share = done / total if total else 1.0
        line = f"{entity}: [{'#' * int(share * 30):<30}] {done:,}/{total:,} points"
        elapsed = now - self.started
        if elapsed >= self.RATE_AFTER_S and done > self.first:
            line += f"  {(done - self.first) / elapsed:,.0f}/s"
        self.stream.write(("\r" + line) if self.tty else (line + "\n"))
        self.stream.flush()

    def done(self) -> None:
        if self.tty and self.current is not None:
            self.stream.write("\n")


class Command(BaseCommand):
    help = "Build ProactiveStream decision points, or run the benchmark on a team's streams."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        build = sub.add_parser("build", help="build and store decision points (idempotent)")
        build.add_argument("--team", required=True, help="team slug")
        build.add_argument("--scope", required=True, help="sports, home, code, desktop or all")
        build.add_argument("--entity", action="append", default=[], help="entity key (repeat)")
        run = sub.add_parser("run", help="replay every method, score, write the report")
        run.add_argument("--team", required=True, help="team slug")
        run.add_argument("--scope", required=True, help="sports, home, code, desktop or all")
        run.add_argument("--entity", action="append", default=[], help="entity key (repeat)")
        run.add_argument(
            "--methods",
            default=",".join(DEFAULT_METHODS),
            help="comma-separated methods, or all (default: every method without an LLM)",
        )
        run.add_argument(
            "--labels",
            default="labeler",
            help="labeler (the scopes' reference labelers, newest version), labeler@N (each "
            "scope's newest version up to N: labeler@1 gives the first labels), jsonl:PATH "
            "(reference labels) or project:ID (a labelling project's final labels)",
        )
        run.add_argument(
            "--no-control", action="store_true", help="switch intervention control off"
        )
        run.add_argument(
            "--synthetic",
            action="append",
            default=[],
            help="entity key whose data is generated, marked so in the report (repeat)",
        )
        run.add_argument(
            "--false-alarm-cost",
            type=float,
            default=DEFAULT_FALSE_ALARM_COST,
            help="what a false alarm costs in missed needs; ProactMem acts on scores from "
            f"C/(1+C) (default {DEFAULT_FALSE_ALARM_COST:g}: from {DEFAULT_THRESHOLD:.2f})",
        )
        run.add_argument(
            "--curve",
            action="store_true",
            help="also replay ProactMem at every score threshold: effectiveness and intrusion "
            "against the threshold, in results.json, results.md and curve_<scope>.png",
        )
        run.add_argument("--out", required=True, help="folder for results.json, .md, .csv, plots")

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(slug=options["team"]).first()
        if team is None:
            raise CommandError(f"no team {options['team']!r}; create it with create_team")
        try:
            if options["action"] == "build":
                self._build(team, options)
            else:
                self._run(team, options)
        except RunConfigError as exc:
            raise CommandError(str(exc)) from None

    def _build(self, team: Team, options: dict[str, Any]) -> None:
        for entity in run_entities(team=team, scope=options["scope"], keys=options["entity"]):
            result = points_build(entity=entity)
            self.stdout.write(
                f"{entity.key} ({entity.scope}): {result.total:,} decision points "
                f"({result.created:,} new, {result.updated:,} updated, "
                f"{result.unchanged:,} unchanged)"
            )

    def _run(self, team: Team, options: dict[str, Any]) -> None:
        methods = [m.strip() for m in options["methods"].split(",") if m.strip()]
        run = run_create(
            team=team,
            scope=options["scope"],
            methods=methods,
            labels=options["labels"],
            entities=options["entity"],
            control=not options["no_control"],
            synthetic=options["synthetic"],
            enqueue=False,
            false_alarm_cost=options["false_alarm_cost"],
            curve=options["curve"],
        )
        out = Path(options["out"])
        progress = StreamProgress(sys.stderr)
        try:
            done = run_execute(run_id=run.pk, out=out, progress=progress)
        except Exception as exc:
            progress.done()
            raise CommandError(f"run {run.pk} failed: {type(exc).__name__}: {exc}") from None
        progress.done()
        assert done is not None and done.results is not None
        self.stdout.write(markdown(done.results))
        self.stdout.write(f"Run {done.pk} stored; files in {out}.")
