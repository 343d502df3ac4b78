"""SYNTHETIC HeartSteps V1 tables (suggestions.csv, jbsteps.csv, gfsteps.csv) for tests.

Only ``users.csv`` of the public release (klasnja/HeartStepsV1) is in the shared data; the other
three tables are too large to obtain here. This writes small files in their format: the column
names of the release, values written the way its files write them (``True``/``False``, empty
for NA, UTC ``YYYY-MM-DD HH:MM:SS`` in ``*.utime``, offsets in seconds in ``*.gmtoff``).
Nothing here was measured on a person. Standard library only; the same arguments always give
byte-identical files.

The column lists follow the release's build code (HeartstepsV1Code ``workspace.analysis.R``
and the ``build_heartsteps_data.R`` its README names) and match the README's table sizes:
suggestions 86 columns, jbsteps 10, gfsteps 7. The importer finds columns by name.

    python -m benchmark.synthetic.heartsteps --out DIR --users 1,2,3 --days 2 --seed 0
"""

from __future__ import annotations

import argparse
import csv
import random
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

SUGGESTIONS_COLUMNS = (
    # times and indices
    "user.index",
    "decision.index",
    "decision.index.nogap",
    "sugg.select.utime",
    "sugg.select.slot",
    "sugg.select.update",
    "sugg.tz",
    "sugg.gmtoff",
    "sugg.decision.utime",
    "sugg.decision.slot",
    "sugg.context.utime",
    "sugg.response.utime",
    "sugg.device.utime",
    "sugg.device.since",
    "interaction.count",
    # availability, decision, response
    "connect",
    "is.randomized",
    "snooze.status",
    "intransit",
    "avail",
    "send",
    "send.active",
    "send.sedentary",
    "is.prefetch",
    "recognized.activity",
    "recognized.activity.response",
    "tag.active",
    "tag.indoor",
    "tag.outdoor",
    "tag.outdoor_snow",
    "front.end.application",
    "returned.message",
    "response",
    # context at the decision and at the response
    *(
        f"{when}.{field}"
        for when in ("dec", "response")
        for field in (
            "city",
            "location.exact",
            "location.category",
            "weather.condition",
            "temperature",
            "windspeed",
            "precipitation.chance",
            "snow",
        )
    ),
    # step counts after the decision (steps and minutes with data), then before it
    *(
        f"{source}{what}{window}"
        for source in ("jb", "gf")
        for window in (10, 30, 40, 60, 90, 120)
        for what in ("mins", "steps")
    ),
    "jbsteps10.zero",
    "jbsteps30.zero",
    "jbsteps60.zero",
    *(
        f"{source}{what}{window}pre"
        for source in ("jb", "gf")
        for window in (30, 60)
        for what in ("mins", "steps")
    ),
    "jbsteps30pre.zero",
    "jbsteps60pre.zero",
)
JBSTEPS_COLUMNS = (
    "user.index",
    "steps.utime",
    "steps.utime.local",
    "steps",
    "decision.index",
    "slot",
    "study.day.nogap",
    "decision.index.following.dec",
    "slot.following.dec",
    "study.day.nogap.following.dec",
)
GFSTEPS_COLUMNS = (
    "user.index",
    "steps.utime",
    "steps",
    "decision.index",
    "slot",
    "decision.index.following.dec",
    "slot.following.dec",
)

# Eastern daylight time, as in the release's Etc/GMT+4 rows (the study ran in Ann Arbor).
TZ_NAME = "Etc/GMT+4"
GMTOFF_S = -4 * 3600
# The five decision slots of a day (local): morning commute, lunch, mid-afternoon, evening
# commute, after dinner.
SLOTS = (time(8, 30), time(12, 15), time(15, 30), time(18, 0), time(21, 0))
WINDOWS = (10, 30, 40, 60, 90, 120)
MINUTE = timedelta(minutes=1)
PRE_MINUTES = 60  # minute steps written before each decision
POST_MINUTES = 120  # and after it
ACTIVITIES = ("STILL", "STILL", "STILL", "UNKNOWN", "ON_FOOT", "IN_VEHICLE")
LOCATIONS = ("home", "work", "other")
WEATHER = ("Clear", "Partly Cloudy", "Overcast", "Rain")
RESPONSES = ("good", "good", "bad", "no_response")
MESSAGES = {
    True: "How about a short walk? A few minutes outside count.",
    False: "Time to stand up and stretch for a minute.",
}


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def generate(
    users: Sequence[int] = (1, 2, 3), days: int = 2, seed: int = 0, start: date = date(2015, 8, 3)
) -> dict[str, list[dict[str, Any]]]:
    """Rows of the three tables for ``users`` over ``days`` study days."""
    suggestions: list[dict[str, Any]] = []
    jbsteps: list[dict[str, Any]] = []
    gfsteps: list[dict[str, Any]] = []
    for user in users:
        rng = random.Random(f"{seed}:{user}")
        decisions: list[tuple[int, int, int, datetime]] = []  # index, slot, day, decision utc
        minute_steps: dict[datetime, int] = {}
        for day in range(days):
            for slot, local in enumerate(SLOTS, start=1):
                index = len(decisions)
                local_dt = datetime.combine(start + timedelta(days=day), local)
                # UTC = local - offset (offset is negative west of Greenwich)
                decision = local_dt - timedelta(seconds=GMTOFF_S) + timedelta(seconds=90)
                decisions.append((index, slot, day, decision))
                for offset in range(-PRE_MINUTES, POST_MINUTES):
                    minute = decision.replace(second=0) + timedelta(minutes=offset)
                    walking = rng.random() < 0.15
                    minute_steps[minute] = rng.randint(60, 120) if walking else rng.randint(0, 8)
        minutes = sorted(minute_steps)
        for index, slot, _day, decision in decisions:
            connect = rng.random() > 0.1
            snooze = False if connect else None
            activity = rng.choice(ACTIVITIES) if connect else None
            transit = None if activity is None else activity not in ("STILL", "UNKNOWN")
            avail = bool(connect and not snooze and not transit)
            randomized = connect and rng.random() < 0.9
            send = bool(avail and randomized and rng.random() < 0.6)
            active = send and rng.random() < 0.5
            response = rng.choice(RESPONSES) if send else None
            responded = decision + timedelta(minutes=rng.randint(1, 20)) if response else None
            row: dict[str, Any] = dict.fromkeys(SUGGESTIONS_COLUMNS)
            row.update(
                {
                    "user.index": user,
                    "decision.index": index,
                    "decision.index.nogap": index,
                    "sugg.select.utime": decision - timedelta(seconds=90),
                    "sugg.select.slot": slot,
                    "sugg.select.update": start.isoformat(),
                    "sugg.tz": TZ_NAME,
                    "sugg.gmtoff": GMTOFF_S,
                    "sugg.decision.utime": decision,
                    "sugg.decision.slot": slot,
                    "sugg.context.utime": decision if connect else None,
                    "sugg.response.utime": responded,
                    "sugg.device.utime": decision - timedelta(minutes=rng.randint(1, 90)),
                    "sugg.device.since": round(rng.uniform(0.01, 1.5), 4),
                    "interaction.count": rng.randint(1, 4) if response else None,
                    "connect": connect,
                    "is.randomized": randomized if connect else None,
                    "snooze.status": snooze,
                    "intransit": transit,
                    "avail": avail,
                    "send": send if connect else None,
                    "send.active": active if connect else None,
                    "send.sedentary": (send and not active) if connect else None,
                    "is.prefetch": False if connect else None,
                    "recognized.activity": activity,
                    "tag.active": active if send else None,
                    "tag.indoor": (not active) if send else None,
                    "tag.outdoor": active if send else None,
                    "tag.outdoor_snow": False if send else None,
                    "front.end.application": "com.example.launcher" if connect else None,
                    "returned.message": MESSAGES[active] if send else None,
                    "response": response,
                    "dec.city": "Ann Arbor" if connect else None,
                    "dec.location.exact": rng.choice(LOCATIONS) if connect else None,
                    "dec.weather.condition": rng.choice(WEATHER) if connect else None,
                    "dec.temperature": round(rng.uniform(15, 30), 1) if connect else None,
                    "dec.windspeed": round(rng.uniform(0, 20), 2) if connect else None,
                    "dec.precipitation.chance": rng.randint(0, 100) if connect else None,
                    "dec.snow": 0.0 if connect else None,
                }
            )
            row["dec.location.category"] = row["dec.location.exact"]
            if responded is not None:
                row["recognized.activity.response"] = "STILL"
                row["response.city"] = "Ann Arbor"
                row["response.location.exact"] = row["dec.location.exact"]
                row["response.location.category"] = row["dec.location.exact"]
                for field in ("weather.condition", "temperature", "windspeed"):
                    row[f"response.{field}"] = row[f"dec.{field}"]
                row["response.precipitation.chance"] = row["dec.precipitation.chance"]
                row["response.snow"] = row["dec.snow"]
            # Windows count minutes ending within w minutes of the decision, as the build does.
            start_minute = decision.replace(second=0)
            for window in WINDOWS:
                after = [m for m in minutes if start_minute <= m < start_minute + window * MINUTE]
                row[f"jbmins{window}"] = len(after)
                row[f"jbsteps{window}"] = sum(minute_steps[m] for m in after)
                moving = [m for m in after if minute_steps[m] > 8]
                row[f"gfmins{window}"] = len(moving)
                row[f"gfsteps{window}"] = sum(minute_steps[m] for m in moving)
            for window in (10, 30, 60):
                row[f"jbsteps{window}.zero"] = row[f"jbsteps{window}"]
            for window in (30, 60):
                before = [m for m in minutes if start_minute - window * MINUTE <= m < start_minute]
                row[f"jbmins{window}pre"] = len(before)
                row[f"jbsteps{window}pre"] = sum(minute_steps[m] for m in before)
                moving = [m for m in before if minute_steps[m] > 8]
                row[f"gfmins{window}pre"] = len(moving)
                row[f"gfsteps{window}pre"] = sum(minute_steps[m] for m in moving)
                row[f"jbsteps{window}pre.zero"] = row[f"jbsteps{window}pre"]
            suggestions.append(row)
        for minute in minutes:
            # The decision before this minute and the one after it (NA at the study's edges).
            previous = [d for d in decisions if d[3].replace(second=0) <= minute]
            following = [d for d in decisions if d[3].replace(second=0) > minute]
            before = previous[-1] if previous else None
            after = following[0] if following else None
            jbsteps.append(
                {
                    "user.index": user,
                    "steps.utime": minute,
                    "steps.utime.local": minute + timedelta(seconds=GMTOFF_S),
                    "steps": minute_steps[minute],
                    "decision.index": before[0] if before else None,
                    "slot": before[1] if before else None,
                    "study.day.nogap": before[2] if before else None,
                    "decision.index.following.dec": after[0] if after else None,
                    "slot.following.dec": after[1] if after else None,
                    "study.day.nogap.following.dec": after[2] if after else None,
                }
            )
            if minute_steps[minute] > 8:  # Google Fit writes only the minutes it saw moving
                gfsteps.append(
                    {
                        "user.index": user,
                        "steps.utime": minute,
                        "steps": minute_steps[minute],
                        "decision.index": before[0] if before else None,
                        "slot": before[1] if before else None,
                        "decision.index.following.dec": after[0] if after else None,
                        "slot.following.dec": after[1] if after else None,
                    }
                )
    return {"suggestions": suggestions, "jbsteps": jbsteps, "gfsteps": gfsteps}


COLUMNS = {
    "suggestions": SUGGESTIONS_COLUMNS,
    "jbsteps": JBSTEPS_COLUMNS,
    "gfsteps": GFSTEPS_COLUMNS,
}


def write_heartsteps(
    out: Path | str,
    users: Sequence[int] = (1, 2, 3),
    days: int = 2,
    seed: int = 0,
    start: date = date(2015, 8, 3),
) -> dict[str, int]:
    """Write the three SYNTHETIC tables into folder ``out``; returns the rows of each."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    tables = generate(users, days, seed, start)
    for name, rows in tables.items():
        with (folder / f"{name}.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(COLUMNS[name])
            for row in rows:
                writer.writerow([_cell(row[column]) for column in COLUMNS[name]])
    return {name: len(rows) for name, rows in tables.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="output folder (files are replaced)")
    parser.add_argument("--users", default="1,2,3", help="user.index values, comma-separated")
    parser.add_argument("--days", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=date.fromisoformat, default=date(2015, 8, 3))
    args = parser.parse_args(argv)
    try:
        users = [int(user) for user in args.users.split(",") if user.strip()]
    except ValueError:
        parser.error("--users takes whole numbers separated by commas, e.g. 1,2,3.")
    if args.days < 1 or not users:
        parser.error("--days must be at least 1 and --users must name someone.")
    counts = write_heartsteps(args.out, users, args.days, args.seed, args.start)
    summary = ", ".join(f"{count} {name}" for name, count in counts.items())
    print(f"wrote SYNTHETIC HeartSteps V1 tables to {args.out}: {summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
