"""``aframes-sync``: push a capture database to an Aframes entity, once or continuously.

Exit codes: 0 done, 1 the server refused or stayed unreachable, 2 a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from aframes_sync.agent import Agent, GaveUp, Options, describe
from aframes_sync.checkpoint import CheckpointError, default_path
from aframes_sync.client import Refused
from aframes_sync.source import ActivityWatchServerSource, ScreenpipeSource
from compiler.sources import SourceError, utc_iso

PROG = "aframes-sync"
OVERLAP_S = 300.0  # re-read 5 minutes before the checkpoint: rows a recorder wrote late
SCOPES = ("desktop",)  # the only scope a capture database feeds


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, not the usage block: the message already names the flag.
        self.exit(2, f"{PROG}: error: {message} (see {PROG} --help)\n")


def _positive(kind: type[int] | type[float]) -> Callable[[str], float | int]:
    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be above 0")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=(
            "Send new rows of a local capture database to an Aframes entity "
            "(POST /api/v1/entities/KEY/events). Typed text and clipboard content stay on "
            "this machine unless --include-text."
        ),
        epilog="Environment: AFRAMES_URL, AFRAMES_TOKEN, AFRAMES_ENTITY stand in for the flags.",
    )
    parser.add_argument(
        "--source",
        required=True,
        metavar="KIND:WHERE",
        help="screenpipe:PATH (a screenpipe-style SQLite, opened read-only) or "
        "activitywatch-server:URL (a running aw-server, e.g. http://localhost:5600)",
    )
    parser.add_argument("--entity", default=os.environ.get("AFRAMES_ENTITY"), help="entity key")
    parser.add_argument("--url", default=os.environ.get("AFRAMES_URL"), help="server base URL")
    parser.add_argument(
        "--token", default=None, help="API token (prefer AFRAMES_TOKEN: flags show in ps)"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true", help="one pass, then exit (the default)")
    mode.add_argument("--follow", action="store_true", help="keep polling; retry forever")
    parser.add_argument(
        "--interval", type=_positive(float), default=30.0, help="seconds between polls (30)"
    )
    parser.add_argument(
        "--batch-size", type=_positive(int), default=1000, help="records per request (1000)"
    )
    parser.add_argument(
        "--checkpoint", type=Path, default=None, help=f"checkpoint file ({default_path()})"
    )
    parser.add_argument(
        "--overlap",
        type=float,
        default=OVERLAP_S,
        help="seconds re-read before the checkpoint on each pass (300)",
    )
    privacy = parser.add_argument_group("privacy (applied before anything leaves this machine)")
    privacy.add_argument(
        "--include-text", action="store_true", help="send typed text and clipboard content"
    )
    privacy.add_argument(
        "--deny-app", action="append", default=[], metavar="NAME", help="never send this app"
    )
    privacy.add_argument(
        "--deny-site",
        action="append",
        default=[],
        metavar="HOST",
        help="never send rows of this site or its subdomains",
    )
    privacy.add_argument(
        "--dry-run", action="store_true", help="print what would be sent; send nothing"
    )
    privacy.add_argument("--show", type=int, default=5, help="records a dry run prints (5)")
    retry = parser.add_argument_group("retries")
    retry.add_argument(
        "--retries", type=int, default=5, help="retries per batch with --once before exit 1 (5)"
    )
    retry.add_argument(
        "--retry-base", type=_positive(float), default=1.0, help="first backoff, seconds (1)"
    )
    retry.add_argument(
        "--max-backoff", type=_positive(float), default=60.0, help="longest backoff (60)"
    )
    retry.add_argument("--timeout", type=_positive(float), default=30.0, help="request timeout")
    retry.add_argument(
        "--max-batches", type=_positive(int), default=None, help="stop after N batches"
    )
    create = parser.add_argument_group("a missing entity")
    create.add_argument("--create", action="store_true", help="create the entity on a 404")
    create.add_argument("--scope", choices=SCOPES, default="desktop", help="its scope (desktop)")
    create.add_argument("--tz", metavar="ZONE", help="its IANA time zone, e.g. Europe/Berlin")
    return parser


def _options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Options:
    kind, _, where = args.source.partition(":")
    source: ScreenpipeSource | ActivityWatchServerSource
    if kind == "activitywatch-server":
        if not where.startswith(("http://", "https://")):
            parser.error(
                f"--source {args.source!r}: expected activitywatch-server:http://HOST:PORT"
            )
        source = ActivityWatchServerSource(where, timeout=args.timeout)
    elif kind != "screenpipe" or not where:
        parser.error(
            f"--source {args.source!r}: expected screenpipe:PATH or activitywatch-server:URL"
        )
    else:
        path = Path(where).expanduser()
        if not path.is_file():
            parser.error(f"--source: no capture database at {path}")
        source = ScreenpipeSource(path)
    if not args.entity:
        parser.error("no entity: pass --entity KEY or set AFRAMES_ENTITY")
    token = args.token or os.environ.get("AFRAMES_TOKEN") or ""
    url = (args.url or "").rstrip("/")
    if not args.dry_run:
        if not url:
            parser.error("no server: pass --url or set AFRAMES_URL")
        if not token:
            parser.error("no token: set AFRAMES_TOKEN (a team token with the write scope)")
    if url and not url.startswith(("http://", "https://")):
        parser.error(f"--url {url!r} must start with http:// or https://")
    create = None
    if args.create:
        if not args.tz:
            parser.error("--create needs --tz ZONE (the entity's IANA time zone)")
        try:
            ZoneInfo(args.tz)
        except (ZoneInfoNotFoundError, ValueError):
            parser.error(f"--tz {args.tz!r} is not an IANA time zone, e.g. Europe/Berlin")
        create = (args.scope, args.tz)
    if args.retries < 0 or args.overlap < 0 or args.show < 0:
        parser.error("--retries, --overlap and --show cannot be negative")
    return Options(
        source=source,
        entity=args.entity,
        url=url or "http://dry-run.invalid",
        token=token,
        checkpoint=args.checkpoint or default_path(),
        batch_size=args.batch_size,
        overlap_s=args.overlap,
        include_text=args.include_text,
        deny_apps=args.deny_app,
        deny_sites=args.deny_site,
        dry_run=args.dry_run,
        show=args.show,
        retries=None if args.follow else args.retries,
        retry_base_s=args.retry_base,
        max_backoff_s=args.max_backoff,
        max_batches=args.max_batches,
        create=create,
        timeout_s=args.timeout,
    )


def main(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    options = _options(parser, args)
    try:
        agent = Agent(options, out=out, err=err, sleep=sleep)
    except CheckpointError as problem:
        print(f"{PROG}: {problem}", file=err)
        return 2
    while True:
        try:
            report, privacy = agent.run_pass()
        except KeyboardInterrupt:
            # The checkpoint is only ever written whole, after an acknowledged batch.
            print(f"{PROG}: interrupted; run again to resume.", file=err)
            return 130
        except (SourceError, CheckpointError) as problem:
            print(f"{PROG}: {problem}", file=err)
            return 2
        except GaveUp as gave_up:
            since = "the start" if gave_up.since is None else utc_iso(gave_up.since)
            print(
                f"{PROG}: gave up after {options.retries} retries: {gave_up}; "
                f"{gave_up.pending} records pending since {since}; run again to resume.",
                file=err,
            )
            return 1
        except Refused as refused:
            print(f"{PROG}: the server refused the batch ({refused}).", file=err)
            if refused.status == 404:
                print(
                    f"{PROG}: create entity {options.entity!r} in the web app, or rerun with "
                    "--create --scope desktop --tz ZONE.",
                    file=err,
                )
            elif refused.status in (401, 403):
                print(f"{PROG}: check AFRAMES_TOKEN: it needs the write scope.", file=err)
            return 1
        for note in options.source.notes:
            print(f"{PROG}: note: {note}", file=err)
        options.source.notes.clear()
        print(describe(report, privacy, dry_run=options.dry_run), file=out, flush=True)
        if report.stopped_early:
            print(f"{PROG}: stopped after {report.batches} batches (--max-batches).", file=out)
            return 0
        if not args.follow or options.dry_run:
            return 0
        try:
            sleep(args.interval)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
