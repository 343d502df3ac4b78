"""``manage.py qa_benchmark``: the QA harness of Activity Frames §6.2 on one desktop entity.

manage.py qa_benchmark --team T --entity KEY [--answerer llm] [--days N] [--repeats R]
    [--context-tokens C] [--representations raw,block,summary] --out DIR

Writes qa.json, qa.md and PNG plots into DIR (benchmark/qa/report.py). Without --answerer:
the oracle, the compiler agreement check and the token report. Progress goes to stderr.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.qa.answerers import DEFAULT_CONTEXT_TOKENS, AnswererError, answerer_named
from aframes_web.qa.representations import REPRESENTATIONS
from aframes_web.qa.run import DEFAULT_DAYS, QaConfigError, qa_run
from aframes_web.streams.selectors import entity_get
from aframes_web.teams.models import Team
from benchmark.qa import report


def writable_folder(path: str) -> Path:
    """The folder, created if need be; CommandError when it cannot be written to."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as problem:
        raise CommandError(
            f"--out {path}: cannot write there ({problem.strerror or problem}); "
            "choose a folder you can write to"
        ) from None
    return out


class Command(BaseCommand):
    help = "Run the QA harness (oracle, compiler agreement, tokens, optional answerer)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", required=True, help="team slug")
        parser.add_argument("--entity", required=True, help="desktop entity key")
        parser.add_argument(
            "--answerer", default=None, help="llm: the model LLM_BASE_URL and LLM_MODEL name"
        )
        parser.add_argument(
            "--days", type=int, default=DEFAULT_DAYS, help=f"days (default {DEFAULT_DAYS})"
        )
        parser.add_argument("--repeats", type=int, default=1, help="trials per question")
        parser.add_argument(
            "--representations",
            default=",".join(REPRESENTATIONS),
            help="what the answerer is given, comma-separated (default: raw,block,summary)",
        )
        parser.add_argument(
            "--context-tokens",
            type=int,
            default=DEFAULT_CONTEXT_TOKENS,
            help=f"the answerer's context in tokens (default {DEFAULT_CONTEXT_TOKENS})",
        )
        parser.add_argument("--out", required=True, help="folder for qa.json, qa.md, plots")

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(slug=options["team"]).first()
        if team is None:
            raise CommandError(f"no team {options['team']!r}; create it with create_team")
        entity = entity_get(team=team, key=options["entity"])
        if entity is None:
            raise CommandError(
                f"team {team.slug!r} has no entity {options['entity']!r}; "
                "list them with GET /api/v1/entities"
            )
        out = writable_folder(options["out"])
        answerer = None
        try:
            if options["answerer"] is not None:
                answerer = answerer_named(
                    options["answerer"], entity=entity, context_tokens=options["context_tokens"]
                )
            results = qa_run(
                entity=entity,
                days=options["days"],
                answerer=answerer,
                repeats=options["repeats"],
                asked=tuple(n.strip() for n in options["representations"].split(",") if n.strip()),
                progress=lambda line: self.stderr.write(line, style_func=str),
            )
        except (AnswererError, QaConfigError) as problem:
            raise CommandError(str(problem)) from None
        written = report.write(results, out)
        self.stdout.write(report.markdown(results))
        self.stdout.write(f"Wrote {', '.join(p.name for p in written)} to {out}")
