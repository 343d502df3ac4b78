"""HeartSteps V1 (Klasnja et al. 2019) public release: one sports entity per ``user.index``.

PATH is one of the release's CSV files or a folder holding them; a folder is read in the
order users, suggestions, jbsteps, gfsteps, and other CSV files are named in ``notes``.
Columns are found by name, so column order and extra columns do not matter.

Times. The release's ``*.utime`` columns are UTC instants (the build code runs R with
``TZ=GMT``); its ``*.tz`` / ``*.gmtoff`` columns give each row's own local zone and offset in
seconds. Which column decides each event's time:

- ``users.csv``: ``intake.survey.utime``; ``intake.survey.tz`` and ``.gmtoff`` give the
  participant's zone and local intake time (attributes).
- ``suggestions.csv``: ``sugg.decision.utime``; the local clock time in attributes comes from
  the row's ``sugg.gmtoff`` (``sugg.tz`` named), or from ``--tz`` where the row has none.
- ``jbsteps.csv``: ``steps.utime``, the start of the minute; a row without it falls back to
  ``steps.utime.local`` read in ``--tz``.
- ``gfsteps.csv``: ``steps.utime``, the start of the minute.

So ``--tz`` is needed only as that fallback (and names the zone of new entities).

Events:

- ``participant`` (users.csv), one per person at intake, value null. A small set of intake
  attributes (age, gender, own phone, fitness app/tracker use, phone comfort,
  conscientiousness, self-efficacy, IPAQ level and MET-minutes). Free text (occupation,
  ``*.names``, ``other.mobile``, ``marother``, ``ethother``) and the other demographics are
  left out; exit-survey results, total days and dropout date happen after intake, so they go
  to ``private`` only.
- ``decision_point`` (suggestions.csv): value 1 if a suggestion was sent, else 0; attributes
  are what the decision saw (slot, availability, activity, location category, weather, steps
  in the 30 and 60 minutes before) and which suggestion was sent. The participant's response
  and the step counts after the decision are outcomes: ``private``. The message text, city,
  exact location and foreground app are left out.
- ``steps`` (jbsteps/gfsteps): one per minute, stamped at the end of the minute (when the count
  was complete), ``attributes: {resolution: minute, source: jawbone | google_fit}``.

Source keys: ``heartsteps:<user>:participant``, ``heartsteps:<user>:decision:<decision.index>``,
``heartsteps:<user>:<source>:<minute start, UTC>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from aframes_web.streams.importers.base import Format, SourceItem
from aframes_web.streams.importers.csvfiles import CsvFile, RowError, number
from aframes_web.streams.importers.localtime import DstTally, iso_utc, to_utc

MINUTE = timedelta(minutes=1)
_USER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,59}")
_NA = ("", "NA", "NAN", "NONE")

Row = dict[str, str]


def _text(row: Row, column: str) -> str | None:
    cell = row.get(column, "").strip()
    return None if cell.upper() in _NA else cell


def _number(row: Row, column: str) -> int | float | None:
    return number(row.get(column, ""), column, required=False)


def _flag(row: Row, column: str) -> bool | None:
    cell = row.get(column, "").strip()
    if cell.upper() in _NA:
        return None
    lowered = cell.lower()
    if lowered in ("true", "t", "1", "yes"):
        return True
    if lowered in ("false", "f", "0", "no"):
        return False
    raise RowError(f"{column} is {cell!r}, not True or False")


def _utc(row: Row, column: str) -> datetime | None:
    """A ``*.utime`` cell: naive means UTC (the release's convention); an offset is honoured."""
    cell = _text(row, column)
    if cell is None:
        return None
    try:
        moment = datetime.fromisoformat(cell)
    except ValueError:
        raise RowError(f"{column} is {cell!r}, not a time like 2015-07-22 14:34:03") from None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _whole(row: Row, column: str) -> int:
    value = number(row.get(column, ""), column)
    if value is None or value != int(value):
        raise RowError(f"{column} is {row.get(column)!r}, not a whole number")
    return int(value)


def _user(row: Row) -> str:
    user = row.get("user.index", "").strip()
    if user.endswith(".0"):  # a float column written by pandas: 12.0
        user = user[:-2]
    if not _USER_RE.fullmatch(user):
        raise RowError(f"user.index {user!r} is not a participant index")
    return user


def _prune(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


@dataclass(frozen=True)
class Table:
    name: str  # file stem: users, suggestions, jbsteps, gfsteps
    columns: tuple[str, ...]  # required
    build: Callable[[HeartStepsReader, Row], tuple[str, dict[str, Any]]]


class HeartStepsReader:
    def __init__(self, path: Path, tz: ZoneInfo | None = None) -> None:
        self.path = path
        self.zone = tz
        self.bytes_read = 0
        self.notes: list[str] = []
        self.tally = DstTally()
        self.fallbacks = 0
        self.files = self._files()

    def _files(self) -> list[tuple[Path, Table]]:
        if self.path.is_file():
            table = table_of(self.path)
            if table is None:
                known = ", ".join(f"{name}.csv" for name in TABLES)
                raise ValueError(f"not a HeartSteps V1 file this importer reads (known: {known}).")
            return [(self.path, table)]
        found: dict[str, Path] = {}
        for candidate in sorted(self.path.iterdir()):
            if not candidate.is_file() or candidate.suffix.lower() != ".csv":
                continue
            table = table_of(candidate)
            if table is not None and table.name not in found:
                found[table.name] = candidate
            else:
                self.notes.append(f"skipped {candidate.name}: not a HeartSteps V1 table read")
        if not found:
            raise ValueError("no HeartSteps V1 files (users.csv, suggestions.csv, ...) here.")
        return [(found[name], table) for name, table in TABLES.items() if name in found]

    def _count(self, size: int) -> None:
        self.bytes_read += size

    def __iter__(self) -> Iterator[SourceItem]:
        for path, table in self.files:
            yield from self._read(path, table)
        if self.fallbacks:
            zone = self.zone.key if self.zone else "--tz"
            self.notes.append(
                f"{self.fallbacks} row(s) had no UTC time and were read from their local time "
                f"in {zone}"
            )
        if self.tally.ambiguous or self.tally.nonexistent:
            self.notes.append(
                f"of those, {self.tally.ambiguous} fell in a repeated fall-back hour (read as "
                f"the first occurrence) and {self.tally.nonexistent} in a skipped "
                "spring-forward hour"
            )

    def _read(self, path: Path, table: Table) -> Iterator[SourceItem]:
        header: dict[str, int] | None = None
        width = 0
        for line, cells, problem in CsvFile(path, self._count).rows():
            location = f"{path.name}:{line}"
            if problem is not None:
                yield SourceItem(location, error=problem)
                continue
            assert cells is not None
            if header is None:
                # R's write.csv adds an unnamed row-name column; it is not data.
                header = {cell.strip(): index for index, cell in enumerate(cells) if cell.strip()}
                missing = [column for column in table.columns if column not in header]
                if missing:
                    yield SourceItem(
                        location,
                        error=f"the header lacks {', '.join(missing)}: not a HeartSteps "
                        f"{table.name}.csv; the file was skipped",
                    )
                    return
                width = len(cells)
                continue
            if len(cells) != width:
                yield SourceItem(location, error=f"has {len(cells)} fields; the header has {width}")
                continue
            row = {column: cells[index] for column, index in header.items()}
            try:
                user, record = table.build(self, row)
            except RowError as exc:
                yield SourceItem(location, error=str(exc))
                continue
            yield SourceItem(location, item=record, entity=user)

    def _local_clock(self, moment: datetime, row: Row, offset_column: str) -> str | None:
        offset = _number(row, offset_column)
        if offset is not None:
            local = moment + timedelta(seconds=offset)
        elif self.zone is not None:
            local = moment.astimezone(self.zone)
        else:
            return None
        return local.replace(tzinfo=None).isoformat(timespec="minutes")

    # -- tables ------------------------------------------------------------------------------

    def participant(self, row: Row) -> tuple[str, dict[str, Any]]:
        user = _user(row)
        intake = _utc(row, "intake.survey.utime")
        if intake is None:
            raise RowError("intake.survey.utime is empty; the participant has no intake time")
        attributes = _prune(
            {
                "age": _number(row, "age"),
                "gender": _text(row, "gender"),
                "own_phone": _flag(row, "own.phone"),
                "uses_fitness_app": _flag(row, "fitapp"),
                "uses_fitness_tracker": _flag(row, "fittracker"),
                "phone_comfort": _number(row, "phonecomfort"),
                "conscientiousness": _number(row, "consc"),
                "self_efficacy": _number(row, "selfeff.intake"),
                "ipaq_activity_level": _number(row, "ipaq.hepa.intake"),
                "met_minutes_per_week": _number(row, "metmins.intake"),
                "timezone": _text(row, "intake.survey.tz"),
                "local_time": self._local_clock(intake, row, "intake.survey.gmtoff"),
            }
        )
        private = _prune(
            {
                "exit_self_efficacy": _number(row, "selfeff.exit"),
                "exit_ipaq_activity_level": _number(row, "ipaq.hepa.exit"),
                "exit_met_minutes_per_week": _number(row, "metmins.exit"),
                "total_days": _number(row, "totaldays"),
                "dropout_date": _text(row, "dropout.date"),
            }
        )
        payload: dict[str, Any] = {
            "type": "participant",
            "value": None,
            "attributes": attributes,
        }
        if private:
            payload["private"] = private
        return user, {
            "occurred_at": iso_utc(intake),
            "kind": "observation",
            "source_key": f"heartsteps:{user}:participant",
            "payload": payload,
        }

    def decision(self, row: Row) -> tuple[str, dict[str, Any]]:
        user = _user(row)
        index = _whole(row, "decision.index")
        moment = _utc(row, "sugg.decision.utime")
        if moment is None:
            raise RowError("sugg.decision.utime is empty; a decision point needs its time")
        sent = bool(_flag(row, "send"))
        suggestion = None
        if sent and _flag(row, "send.active"):
            suggestion = "active"
        elif sent and _flag(row, "send.sedentary"):
            suggestion = "sedentary"
        attributes = _prune(
            {
                "decision_index": index,
                "slot": _number(row, "sugg.decision.slot") or _number(row, "sugg.select.slot"),
                "local_time": self._local_clock(moment, row, "sugg.gmtoff"),
                "timezone": _text(row, "sugg.tz"),
                "connected": _flag(row, "connect"),
                "available": _flag(row, "avail"),
                "randomized": _flag(row, "is.randomized"),
                "snoozed": _flag(row, "snooze.status"),
                "in_transit": _flag(row, "intransit"),
                "prefetched_context": _flag(row, "is.prefetch"),
                "recognized_activity": _text(row, "recognized.activity"),
                "location": _text(row, "dec.location.category"),
                "weather": _text(row, "dec.weather.condition"),
                "temperature": _number(row, "dec.temperature"),
                "windspeed": _number(row, "dec.windspeed"),
                "precipitation_chance": _number(row, "dec.precipitation.chance"),
                "snow": _number(row, "dec.snow"),
                "hours_since_phone_use": _number(row, "sugg.device.since"),
                "jawbone_steps_30min_before": _number(row, "jbsteps30pre"),
                "jawbone_steps_60min_before": _number(row, "jbsteps60pre"),
                "google_fit_steps_30min_before": _number(row, "gfsteps30pre"),
                "google_fit_steps_60min_before": _number(row, "gfsteps60pre"),
                "suggestion": suggestion,
            }
        )
        responded = _utc(row, "sugg.response.utime")
        private: dict[str, Any] = _prune(
            {
                "response": _text(row, "response"),
                "responded_at": iso_utc(responded) if responded else None,
                "interaction_count": _number(row, "interaction.count"),
            }
        )
        for column in row:
            if _OUTCOME_STEPS.fullmatch(column):
                value = _number(row, column)
                if value is not None:
                    private[column] = value
        payload: dict[str, Any] = {
            "type": "decision_point",
            "value": 1 if sent else 0,
            "attributes": attributes,
        }
        if private:
            payload["private"] = private
        return user, {
            "occurred_at": iso_utc(moment),
            "kind": "observation",
            "source_key": f"heartsteps:{user}:decision:{index}",
            "payload": payload,
        }

    def _steps(self, row: Row, source: str, local_column: str | None) -> tuple[str, dict[str, Any]]:
        user = _user(row)
        start = _utc(row, "steps.utime")
        if start is None and local_column is not None and _text(row, local_column):
            if self.zone is None:
                raise RowError(f"steps.utime is empty; pass --tz to read {local_column}")
            try:
                local = datetime.fromisoformat(_text(row, local_column) or "")
            except ValueError:
                raise RowError(f"{local_column} is not a time like 2015-07-22 14:34:00") from None
            start = to_utc(local.replace(tzinfo=None), self.zone, self.tally)
            self.fallbacks += 1
        if start is None:
            raise RowError("steps.utime is empty")
        return user, {
            "occurred_at": iso_utc(start + MINUTE),
            "kind": "observation",
            "source_key": f"heartsteps:{user}:{source}:{start:%Y-%m-%dT%H:%M:%SZ}",
            "payload": {
                "type": "steps",
                "value": number(row["steps"], "steps"),
                "unit": "count",
                "attributes": {"resolution": "minute", "source": source},
            },
        }

    def jawbone(self, row: Row) -> tuple[str, dict[str, Any]]:
        return self._steps(row, "jawbone", "steps.utime.local")

    def google_fit(self, row: Row) -> tuple[str, dict[str, Any]]:
        return self._steps(row, "google_fit", None)


# Step counts after the decision (10 ... 120 minutes; minutes with data), the study's outcome.
_OUTCOME_STEPS = re.compile(r"(jb|gf)(steps|mins)\d+")

#: The tables read, in the order a folder is read.
TABLES = {
    "users": Table("users", ("user.index", "intake.survey.utime"), HeartStepsReader.participant),
    "suggestions": Table(
        "suggestions",
        ("user.index", "decision.index", "sugg.decision.utime", "send"),
        HeartStepsReader.decision,
    ),
    "jbsteps": Table("jbsteps", ("user.index", "steps.utime", "steps"), HeartStepsReader.jawbone),
    "gfsteps": Table(
        "gfsteps", ("user.index", "steps.utime", "steps"), HeartStepsReader.google_fit
    ),
}


def table_of(path: Path) -> Table | None:
    """The table a file name announces (``jbsteps.csv``; an upload's ``<uuid>-jbsteps.csv``)."""
    if path.suffix.lower() != ".csv":
        return None
    for name, table in TABLES.items():
        if re.fullmatch(rf"(?:.*[-_. ])?{name}", path.stem, re.IGNORECASE):
            return table
    return None


FORMAT = Format(
    name="heartsteps",
    factory=HeartStepsReader,
    scope="sports",
    needs_tz=False,
    multi_entity=True,
    description="HeartSteps V1 release (users/suggestions/jbsteps/gfsteps.csv or their folder), "
    "one entity per user.index",
)
