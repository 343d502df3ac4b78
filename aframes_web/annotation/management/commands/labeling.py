"""manage.py labeling create|export|import|agreement — the annotation workbench from a shell.

labeling create --team T --name N --scope S [--entity KEY ...] [--from ISO] [--to ISO]
                [--labels-per-point 3] [--triage none|rule|llm] [--review-percent 10]
labeling sample --team T --name N --scope S [--entity KEY ...] [--seed 1] [--positives-max M]
                [--abstains N] [--labels-per-point 3] [--labeler-version N]
labeling export --team T --project ID [--format jsonl|csv] [--out FILE]
labeling import --team T --project ID FILE
labeling agreement --team T --project ID
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.annotation import selectors as sel
from aframes_web.annotation import services
from aframes_web.annotation.models import LabelProject
from aframes_web.teams.models import Team


def _moment(text: str) -> datetime:
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(f"{text!r} is not an ISO 8601 time") from None
    if found.utcoffset() is None:
        raise CommandError(f"{text!r} needs a UTC offset, e.g. {text}+00:00")
    return found


class Command(BaseCommand):
    help = "Create labelling projects, export and import their labels, report agreement."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="create a project and assign its streams")
        create.add_argument("--team", required=True)
        create.add_argument("--name", required=True)
        create.add_argument("--scope", required=True, help="home, sports, code or desktop")
        create.add_argument("--entity", action="append", default=[], help="entity key (repeat)")
        create.add_argument("--from", dest="starts", help="points from (ISO 8601 with offset)")
        create.add_argument("--to", dest="ends", help="points before (ISO 8601 with offset)")
        create.add_argument("--labels-per-point", type=int, default=3)
        create.add_argument("--triage", default="none", choices=LabelProject.Triage.values)
        create.add_argument("--review-percent", type=int, default=10)
        create.add_argument("--guidelines", help="a Markdown file (default: the scope's rule)")
        sample = sub.add_parser(
            "sample",
            help="a blind project for a labeler's validity study: every point it flags and as "
            "many random abstains",
        )
        sample.add_argument("--team", required=True)
        sample.add_argument("--name", required=True)
        sample.add_argument("--scope", required=True, help="home, sports, code or desktop")
        sample.add_argument("--entity", action="append", default=[], help="entity key (repeat)")
        sample.add_argument("--seed", type=int, default=1, help="the random draw (default 1)")
        sample.add_argument(
            "--positives-max", type=int, help="at most this many flagged points (drawn at random)"
        )
        sample.add_argument(
            "--abstains", type=int, help="random abstains to draw (default: as many as flagged)"
        )
        sample.add_argument("--labels-per-point", type=int, default=3)
        sample.add_argument(
            "--labeler-version", type=int, help="the labeler version to study (default newest)"
        )
        for name in ("export", "import", "agreement"):
            one = sub.add_parser(name)
            one.add_argument("--team", required=True)
            one.add_argument("--project", type=int, required=True)
            if name == "export":
                one.add_argument("--format", default="jsonl", choices=["jsonl", "csv"])
                one.add_argument("--out", help="file to write (default: standard output)")
            if name == "import":
                one.add_argument("file", help="reference labels, one JSON object per line")

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(slug=options["team"]).first()
        if team is None:
            raise CommandError(f"no team {options['team']!r}; create it with create_team")
        try:
            getattr(self, f"_{options['action']}")(team, options)
        except services.WorkbenchError as exc:
            raise CommandError(str(exc)) from None

    def _project(self, team: Team, options: dict[str, Any]) -> LabelProject:
        found = sel.project_get(team=team, pk=options["project"])
        if found is None:
            raise CommandError(f"team {team.slug} has no labelling project {options['project']}")
        return found

    def _create(self, team: Team, options: dict[str, Any]) -> None:
        guidelines = ""
        if options["guidelines"]:
            guidelines = Path(options["guidelines"]).read_text(encoding="utf-8")
        spec = services.ProjectSpec(
            name=options["name"],
            scope=options["scope"],
            entities=options["entity"],
            starts_at=_moment(options["starts"]) if options["starts"] else None,
            ends_at=_moment(options["ends"]) if options["ends"] else None,
            labels_per_point=options["labels_per_point"],
            guidelines=guidelines,
            triage=options["triage"],
            review_percent=options["review_percent"],
        )
        project = services.project_create(team=team, spec=spec)
        counts = sel.project_counts(project)
        self.stdout.write(
            f"Project {project.pk} ({project.name}): {counts['points']:,} decision points in "
            f"{project.streams.count()} stream(s), {project.labels_per_point} labels each."
        )

    def _sample(self, team: Team, options: dict[str, Any]) -> None:
        if options["positives_max"] is not None and options["positives_max"] < 1:
            raise CommandError("--positives-max must be at least 1")
        if options["abstains"] is not None and options["abstains"] < 0:
            raise CommandError("--abstains must be 0 or more")
        try:
            study = services.study_create(
                team=team,
                name=options["name"],
                scope=options["scope"],
                entities=options["entity"],
                seed=options["seed"],
                positives_max=options["positives_max"],
                labels_per_point=options["labels_per_point"],
                labeler_version=options["labeler_version"],
                abstains=options["abstains"],
            )
        except ValueError as exc:  # an unknown labeler version
            raise CommandError(str(exc)) from None
        project = study.project
        self.stdout.write(
            f"Project {project.pk} ({project.name}): {study.positives + study.abstains:,} "
            f"decision points from {project.streams.count()} stream(s) ({study.positives:,} the "
            f"labeler flags, {study.abstains:,} of its abstains drawn with seed "
            f"{options['seed']}), {project.labels_per_point} independent labels each. Nothing "
            "an annotator sees says which is which. When every point is settled: labeling "
            f"export --team {team.slug} --project {project.pk} --out "
            f"benchmark/studies/{project.scope}/{project.pk}.jsonl, then make bench-labels."
        )

    def _export(self, team: Team, options: dict[str, Any]) -> None:
        project = self._project(team, options)
        if options["format"] == "jsonl":
            lines = sel.export_jsonl(project)
        else:
            lines = sel.export_csv(project)
        if options["out"]:
            with open(options["out"], "w", encoding="utf-8", newline="") as handle:
                handle.writelines(lines)
            self.stderr.write(f"Wrote {options['out']}.")
        else:
            sys.stdout.writelines(lines)

    def _import(self, team: Team, options: dict[str, Any]) -> None:
        project = self._project(team, options)
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        with path.open(encoding="utf-8") as handle:
            n = services.labels_import(project=project, lines=handle, name=path.name, user=None)
        self.stdout.write(f"Imported {n:,} final label(s) into project {project.pk}.")

    def _agreement(self, team: Team, options: dict[str, Any]) -> None:
        project = self._project(team, options)
        report = sel.agreement(project)

        def show(value: float | None) -> str:
            return "—" if value is None else f"{value:.3f}"

        o = report.overall
        self.stdout.write(
            f"Project {project.pk} ({project.name}): {o.items:,} points labelled twice or more, "
            f"{o.labels:,} labels\nraw agreement {show(o.raw)}, Fleiss' kappa {show(o.fleiss)} "
            f"({o.fleiss_items:,} points with all labels), Krippendorff's alpha {show(o.alpha)}"
        )
        for pair in report.pairs:
            self.stdout.write(
                f"  {pair.first} · {pair.second}: {pair.items:,} shared, "
                f"agreement {show(pair.agreement)}, Cohen's kappa {show(pair.kappa)}, "
                f"Gwet's AC1 {show(pair.ac1)}"
            )
