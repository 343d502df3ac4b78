"""manage.py replay_plan PLAN.json --url URL [--routine ID] [--slot name=value ...] [--execute]
[--allow-destructive] [--headed] [--chromium PATH] [--timeout S]"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.activity.replay_checks import PlanError, ReplayError, parse_slots, select_plan
from aframes_web.activity.replay_run import DEFAULT_TIMEOUT_S, replay

BAD_INPUT = 2  # exit status of a replay refused before it ran (1: it stopped at a step)


class Command(BaseCommand):
    help = (
        "Replay a guarded routine plan (compiler.replay.plan, as JSON) in the system Chromium "
        "against URL, grounding each step by accessibility role and name. Dry-run unless "
        "--execute; steps that begin with a destructive verb run only with "
        "--allow-destructive; a guard that does not match stops the replay. Prints the report "
        "as JSON. Exit 0 when every step ran (or would run), 1 when the replay stopped at a "
        "step, 2 when the input was refused."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "plan",
            help="A JSON file: a plan as compiler.replay.plan writes it, or the routines "
            "document of python -m compiler routines -f json.",
        )
        parser.add_argument("--url", required=True, help="The page to start the replay on.")
        parser.add_argument(
            "--routine", help="The id of the routine to replay, from a routines document."
        )
        parser.add_argument(
            "--slot",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="A value for one of the plan's slots (repeat for each type step's slot).",
        )
        parser.add_argument(
            "--execute", action="store_true", help="Perform the steps (default: dry-run)."
        )
        parser.add_argument(
            "--allow-destructive",
            action="store_true",
            help="Also run steps that begin with a destructive verb (send, delete, submit, ...).",
        )
        parser.add_argument("--headed", action="store_true", help="Show the browser window.")
        parser.add_argument(
            "--chromium", help="The Chromium executable (default: /usr/bin/chromium, then $PATH)."
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT_S,
            help=f"Seconds a guard waits for its page and element (default {DEFAULT_TIMEOUT_S:g}).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["plan"])
        try:
            plan = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise CommandError(
                f"cannot read the plan {path}: {exc.strerror or exc}", returncode=BAD_INPUT
            ) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise CommandError(
                f"the plan {path} is not JSON ({exc}).", returncode=BAD_INPUT
            ) from None
        if options["timeout"] <= 0:
            raise CommandError(
                "--timeout must be a positive number of seconds.", returncode=BAD_INPUT
            )
        try:
            result = replay(
                select_plan(plan, options["routine"]),
                options["url"],
                parse_slots(options["slot"]),
                execute=options["execute"],
                allow_destructive=options["allow_destructive"],
                headed=options["headed"],
                chromium=options["chromium"],
                timeout_s=options["timeout"],
            )
        except PlanError as problem:
            raise CommandError(f"{path}: {problem}", returncode=BAD_INPUT) from None
        except ReplayError as problem:
            raise CommandError(str(problem), returncode=BAD_INPUT) from None
        self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
        if result["stopped_at"] is not None:
            self.stderr.write(f"replay stopped at step {result['stopped_at']}: {result['reason']}")
            sys.exit(1)
