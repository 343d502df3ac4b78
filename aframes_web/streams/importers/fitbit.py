"""Fitabase exports of Fitbit data (``*_merged.csv``): one sports entity per ``Id``.

PATH is one known CSV file or a folder; a folder is read file kind by file kind in the order
of :data:`KINDS` (subfolders in name order), and CSV files of kinds this module does not know
are named in ``notes``, never guessed at. Times in these files are naive local times
(``4/12/2016 1:00:00 PM``) and go through :func:`localtime.to_utc` with ``--tz``.

Each row becomes one observation, stamped when its value was complete, so a causal replay
(principle 4) never sees an hour's or a day's total before that hour or day is over:

====================  ======================================================================
file                  event
====================  ======================================================================
hourlySteps           ``steps`` (count), end of the hour
hourlyIntensities     ``intensity`` (TotalIntensity: sum of the hour's minute levels 0-3,
                      unit ``level-min``; AverageIntensity in attributes), end of the hour
hourlyCalories        ``calories`` (kcal), end of the hour
dailyActivity         one ``daily_activity`` per day: value TotalSteps, the distances (km)
                      and minutes per intensity and the day's calories in attributes,
                      at 23:59:59 local of the day (Fitbit's own stamp for day-level logs)
sleepDay              ``sleep``: minutes asleep; minutes in bed and sleep records in
                      attributes; 23:59:59 local of the day (the day's sleep logs can
                      include naps, so the total is final only then)
weightLogInfo         ``weight`` (kg) at the log time, BMI, fat % and manual flag in
                      attributes (WeightPounds is the same measurement and is left out)
minuteStepsWide       ``steps_by_minute``: the hour's 60 minute counts in
                      ``attributes.minutes`` (``Steps00`` first), their sum as the value,
                      end of the hour
minuteIntensitiesWide ``intensity_by_minute``: the hour's 60 minute levels (0 sedentary,
                      1 light, 2 fairly, 3 very active) in ``attributes.minutes``, their sum
                      (``level-min``) as the value, end of the hour
====================  ======================================================================

The wide minute files hold one row per person-hour with one column per minute (Fitabase's
"wide" layout of ``minuteStepsNarrow``): one event per row keeps an hour's minutes together,
stamped when the hour is over like the hourly files (a device syncs minutes in batches, so a
causal replay sees them no earlier than that), at a sixtieth of the events a row per minute
would cost. They are distinct types, not ``steps``: the hourly file states the same hour's
total, and one hour must not count twice.

Source keys are ``fitbit:<Id>:<kind>:<local time as written, ISO>`` (weight: the LogId), so a
re-run or an extended file adds only new rows. A local hour written twice for one person on a
fall-back day is the repeated hour: its second row is read as the second occurrence and keyed
with ``#2``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from aframes_web.streams.importers.base import Format, SourceItem
from aframes_web.streams.importers.csvfiles import CsvFile, RowError, number
from aframes_web.streams.importers.localtime import DstTally, iso_utc, to_utc

HOUR = timedelta(hours=1)
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,59}")
_STAMP_RE = re.compile(
    r"\s*(\d{1,2})/(\d{1,2})/(\d{4})"
    r"(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([AaPp])\.?[Mm]\.?)?)?\s*"
)


def parse_local(text: str) -> datetime:
    """``M/D/YYYY[ h:mm[:ss] AM|PM]`` (or a 24-hour clock without AM/PM) as a naive datetime.

    12:xx AM is just after midnight and 12:xx PM just after noon, as on every 12-hour clock.
    """
    match = _STAMP_RE.fullmatch(text)
    if match is None:
        raise RowError(f"{text!r} is not a date like 4/12/2016 or 4/12/2016 1:00:00 PM")
    month, day, year, hour, minute, second, half = match.groups()
    clock = 0 if hour is None else int(hour)
    if half is not None:
        if not 1 <= clock <= 12:
            raise RowError(f"{text!r}: {clock} is not an hour of a 12-hour clock")
        clock = clock % 12 + (12 if half in "Pp" else 0)
    try:
        return datetime(  # noqa: DTZ001 - a naive local time, made aware by to_utc
            int(year), int(month), int(day), clock, int(minute or 0), int(second or 0)
        )
    except ValueError as exc:
        raise RowError(f"{text!r} is not a valid date and time ({exc})") from None


Row = dict[str, str]


@dataclass(frozen=True)
class Kind:
    """One Fitabase file kind: what its rows are and how they become observations."""

    prefix: str  # file names start with it: hourlySteps_merged.csv
    key: str  # its part of source keys
    time_column: str
    columns: tuple[str, ...]  # required besides Id and the time column
    stamp: str  # "hour": end of the hour; "day": 23:59:59 of the date; "instant": as written
    payload: Callable[[Row], dict[str, Any]]


def _hourly(kind: str, column: str, unit: str, **extra: str) -> Callable[[Row], dict[str, Any]]:
    def build(row: Row) -> dict[str, Any]:
        attributes: dict[str, Any] = {"resolution": "hour"}
        for name, source in extra.items():
            attributes[name] = number(row[source], source)
        return {
            "type": kind,
            "value": number(row[column], column),
            "unit": unit,
            "attributes": attributes,
        }

    return build


_DAILY_ATTRIBUTES = {
    "distance_km": "TotalDistance",
    "tracker_distance_km": "TrackerDistance",
    "logged_activities_distance_km": "LoggedActivitiesDistance",
    "very_active_distance_km": "VeryActiveDistance",
    "moderately_active_distance_km": "ModeratelyActiveDistance",
    "light_active_distance_km": "LightActiveDistance",
    "sedentary_active_distance_km": "SedentaryActiveDistance",
    "very_active_minutes": "VeryActiveMinutes",
    "fairly_active_minutes": "FairlyActiveMinutes",
    "lightly_active_minutes": "LightlyActiveMinutes",
    "sedentary_minutes": "SedentaryMinutes",
    "calories_kcal": "Calories",
}


def _daily_activity(row: Row) -> dict[str, Any]:
    attributes: dict[str, Any] = {"resolution": "day"}
    for name, column in _DAILY_ATTRIBUTES.items():
        attributes[name] = number(row[column], column, required=False)
    return {
        "type": "daily_activity",
        "value": number(row["TotalSteps"], "TotalSteps"),
        "unit": "count",
        "attributes": attributes,
    }


def _sleep(row: Row) -> dict[str, Any]:
    return {
        "type": "sleep",
        "value": number(row["TotalMinutesAsleep"], "TotalMinutesAsleep"),
        "unit": "min",
        "attributes": {
            "resolution": "day",
            "minutes_in_bed": number(row["TotalTimeInBed"], "TotalTimeInBed", required=False),
            "sleep_records": number(row["TotalSleepRecords"], "TotalSleepRecords", required=False),
        },
    }


def _boolean(text: str, column: str) -> bool | None:
    cell = text.strip().lower()
    if cell in ("true", "1"):
        return True
    if cell in ("false", "0"):
        return False
    if cell in ("", "na"):
        return None
    raise RowError(f"{column} is {text!r}, not True or False")


def _weight(row: Row) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "bmi": number(row.get("BMI", ""), "BMI", required=False),
        "manual": _boolean(row.get("IsManualReport", ""), "IsManualReport"),
    }
    fat = number(row.get("Fat", ""), "Fat", required=False)
    if fat is not None:
        attributes["fat_percent"] = fat
    return {
        "type": "weight",
        "value": number(row["WeightKg"], "WeightKg"),
        "unit": "kg",
        "attributes": attributes,
    }


MINUTES = 60
_MINUTE_COLUMNS = {
    "steps": tuple(f"Steps{m:02d}" for m in range(MINUTES)),
    "intensity": tuple(f"Intensity{m:02d}" for m in range(MINUTES)),
}
# Fitbit's minute intensity levels (Fitabase data dictionary): 0 sedentary ... 3 very active.
INTENSITY_LEVELS = range(4)


def _by_minute(kind: str, unit: str) -> Callable[[Row], dict[str, Any]]:
    columns = _MINUTE_COLUMNS[kind]

    def build(row: Row) -> dict[str, Any]:
        minutes = []
        for column in columns:
            value = number(row[column], column)
            if not isinstance(value, int) or value < 0:
                raise RowError(f"{column} is {row[column]!r}, not a whole number of at least 0")
            if kind == "intensity" and value not in INTENSITY_LEVELS:
                raise RowError(f"{column} is {value}, not an intensity level 0-3")
            minutes.append(value)
        return {
            "type": f"{kind}_by_minute",
            "value": sum(minutes),
            "unit": unit,
            "attributes": {"resolution": "minute", "minutes": minutes},
        }

    return build


#: The file kinds read, in the order a folder is read.
KINDS = (
    Kind(
        "dailyActivity",
        "daily_activity",
        "ActivityDate",
        ("TotalSteps", *_DAILY_ATTRIBUTES.values()),
        "day",
        _daily_activity,
    ),
    Kind(
        "sleepDay",
        "sleep",
        "SleepDay",
        ("TotalSleepRecords", "TotalMinutesAsleep", "TotalTimeInBed"),
        "day",
        _sleep,
    ),
    Kind("weightLogInfo", "weight", "Date", ("WeightKg",), "instant", _weight),
    Kind(
        "hourlySteps",
        "hourly_steps",
        "ActivityHour",
        ("StepTotal",),
        "hour",
        _hourly("steps", "StepTotal", "count"),
    ),
    Kind(
        "hourlyIntensities",
        "hourly_intensity",
        "ActivityHour",
        ("TotalIntensity", "AverageIntensity"),
        "hour",
        _hourly("intensity", "TotalIntensity", "level-min", average_intensity="AverageIntensity"),
    ),
    Kind(
        "hourlyCalories",
        "hourly_calories",
        "ActivityHour",
        ("Calories",),
        "hour",
        _hourly("calories", "Calories", "kcal"),
    ),
    Kind(
        "minuteStepsWide",
        "minute_steps",
        "ActivityHour",
        _MINUTE_COLUMNS["steps"],
        "hour",
        _by_minute("steps", "count"),
    ),
    Kind(
        "minuteIntensitiesWide",
        "minute_intensity",
        "ActivityHour",
        _MINUTE_COLUMNS["intensity"],
        "hour",
        _by_minute("intensity", "level-min"),
    ),
)


def kind_of(path: Path) -> Kind | None:
    """The kind a file name announces (``hourlySteps_merged.csv``), or None.

    The name may carry a prefix ending in ``-``, ``_``, ``.`` or a space (an upload is stored
    as ``<uuid>-hourlySteps_merged.csv``); ``minuteStepsNarrow`` or ``dailySteps`` are other
    Fitabase kinds, not these.
    """
    if path.suffix.lower() != ".csv":
        return None
    for kind in KINDS:
        if re.search(rf"(?:^|[-_. ]){kind.prefix}(?:_|$)", path.stem, re.IGNORECASE):
            return kind
    return None


class FitabaseReader:
    def __init__(self, path: Path, tz: ZoneInfo | None = None) -> None:
        if tz is None:
            raise ValueError("Fitabase files hold local times without an offset: pass --tz.")
        self.path = path
        self.zone = tz
        self.bytes_read = 0
        self.notes: list[str] = []
        self.tally = DstTally()
        self.repeated_hours = 0
        self.files = self._files()

    def _files(self) -> list[tuple[Path, Kind]]:
        if self.path.is_file():
            kind = kind_of(self.path)
            if kind is None:
                known = ", ".join(f"{k.prefix}_merged.csv" for k in KINDS)
                raise ValueError(f"not a Fitabase file this importer reads (known: {known}).")
            return [(self.path, kind)]
        found: list[tuple[str, int, str, Path, Kind]] = []
        order = {kind.prefix: position for position, kind in enumerate(KINDS)}
        for candidate in self.path.rglob("*"):
            if not candidate.is_file() or candidate.suffix.lower() != ".csv":
                continue
            relative = candidate.relative_to(self.path)
            kind = kind_of(candidate)
            if kind is None:
                self.notes.append(f"skipped {relative.as_posix()}: not a Fitabase file kind read")
                continue
            found.append(
                (relative.parent.as_posix(), order[kind.prefix], candidate.name, candidate, kind)
            )
        self.notes.sort()
        if not found:
            raise ValueError("no Fitabase files (hourlySteps_merged.csv, ...) in this folder.")
        return [(path, kind) for *_, path, kind in sorted(found, key=lambda f: f[:3])]

    def _count(self, size: int) -> None:
        self.bytes_read += size

    def __iter__(self) -> Iterator[SourceItem]:
        for path, kind in self.files:
            name = path.name if path == self.path else path.relative_to(self.path).as_posix()
            yield from self._read(path, name, kind)
        if self.tally.ambiguous:
            self.notes.append(
                f"{self.tally.ambiguous} local time(s) fell in a repeated fall-back hour of "
                f"{self.zone.key}: read as the first occurrence, except {self.repeated_hours} "
                "hourly row(s) that repeat an hour already read for the same person, read as "
                "the second occurrence (source key suffix #2)"
            )
        if self.tally.nonexistent:
            self.notes.append(
                f"{self.tally.nonexistent} local time(s) fall in the hour {self.zone.key} skips "
                "at spring-forward: read with the offset in force before the jump"
            )

    def _read(self, path: Path, name: str, kind: Kind) -> Iterator[SourceItem]:
        header: dict[str, int] | None = None
        # Ambiguous local hours already read, per person: the only state that grows with the
        # file, and only by the rows of fall-back hours.
        seen_ambiguous: set[tuple[str, datetime]] = set()
        for line, cells, problem in CsvFile(path, self._count).rows():
            location = f"{name}:{line}"
            if problem is not None:
                yield SourceItem(location, error=problem)
                continue
            assert cells is not None
            if header is None:
                header = {cell.strip(): index for index, cell in enumerate(cells)}
                missing = [c for c in ("Id", kind.time_column, *kind.columns) if c not in header]
                if missing:
                    yield SourceItem(
                        location,
                        error=f"the header lacks {', '.join(missing)}: not a {kind.prefix} file; "
                        "the file was skipped",
                    )
                    return
                continue
            if len(cells) != len(header):
                yield SourceItem(
                    location, error=f"has {len(cells)} fields; the header has {len(header)}"
                )
                continue
            row = {column: cells[index] for column, index in header.items()}
            try:
                person, record = self._record(row, kind, seen_ambiguous)
            except RowError as exc:
                yield SourceItem(location, error=str(exc))
                continue
            yield SourceItem(location, item=record, entity=person)

    def _record(
        self, row: Row, kind: Kind, seen_ambiguous: set[tuple[str, datetime]]
    ) -> tuple[str, dict[str, Any]]:
        person = row["Id"].strip()
        if not _ID_RE.fullmatch(person):
            raise RowError(f"Id {person!r} is not a participant id")
        local = parse_local(row[kind.time_column])
        label = local.isoformat(timespec="minutes" if local.second == 0 else "seconds")
        if kind.stamp == "day":
            label = local.date().isoformat()
            moment = to_utc(datetime.combine(local.date(), time(23, 59, 59)), self.zone, self.tally)
        else:
            before = self.tally.ambiguous
            moment = to_utc(local, self.zone, self.tally)
            if self.tally.ambiguous != before and kind.stamp == "hour":
                if (person, local) in seen_ambiguous:
                    # The file gives this hour twice: the second row is the repeated hour.
                    # localtime reads a lone ambiguous time as its first occurrence; fold=1
                    # names the other one.
                    moment = local.replace(tzinfo=self.zone, fold=1).astimezone(UTC)
                    label += "#2"
                    self.repeated_hours += 1
                else:
                    seen_ambiguous.add((person, local))
            if kind.stamp == "hour":
                moment += HOUR
        payload = kind.payload(row)
        if kind.stamp == "day":
            payload["attributes"]["date"] = label
        elif kind.stamp == "hour":
            payload["attributes"]["hour"] = label.removesuffix("#2")
        key_part = label
        if kind.key == "weight":
            log_id = row.get("LogId", "").strip()
            if log_id:
                payload["attributes"]["log_id"] = log_id
                key_part = f"log{log_id}"
        return person, {
            "occurred_at": iso_utc(moment),
            "kind": "observation",
            "source_key": f"fitbit:{person}:{kind.key}:{key_part}",
            "payload": payload,
        }


FORMAT = Format(
    name="fitbit",
    factory=FitabaseReader,
    scope="sports",
    needs_tz=True,
    multi_entity=True,
    description=(
        "Fitabase Fitbit exports (*_merged.csv file or folder; hourly, daily and wide minute "
        "files), one entity per Id"
    ),
)
