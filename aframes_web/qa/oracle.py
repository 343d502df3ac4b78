"""The QA oracle (Activity Frames §6.2): a day's figures straight from the stored snapshot rows.

It shares no code with ``compiler/`` on purpose: the compiler is what the harness checks, so
its reference must be computed another way. The rule is the paper's inactivity-timeout dwell:
every snapshot row of the day, all monitors interleaved in time order, is credited the gap to
the next row, capped at :data:`ORACLE_DWELL_CAP_S`; the day's last row is credited nothing
(nothing after it shows that anyone was still there). Each figure is one database query (a
window function, ``LEAD``, over the day's rows), written with the ORM so that it runs on SQLite
and PostgreSQL alike; only the seconds between two timestamps need each vendor's own SQL.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from django.db import connection
from django.db.models import Count, F, Max, Min, QuerySet, Window
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Lead, TruncDate

from aframes_web.streams.models import Entity, Event
from benchmark.qa.questions import DayFigures

ORACLE_DWELL_CAP_S = 60.0  # Activity Frames §6.2: the oracle's inactivity timeout, per row
SNAPSHOT = "snapshot"


def local_day_bounds(entity: Entity, day: date) -> tuple[datetime, datetime]:
    """The UTC instants of the entity's local midnight and the next one (23 or 25 hours
    across DST changes). Written here, not taken from the compiler, to stay independent."""
    zone = ZoneInfo(entity.timezone)
    start = datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)
    end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=zone).astimezone(UTC)
    return start, end


def _day_rows(entity: Entity, day: date) -> QuerySet[Event]:
    start, end = local_day_bounds(entity, day)
    return Event.objects.filter(
        entity=entity, kind=SNAPSHOT, occurred_at__gte=start, occurred_at__lt=end
    )


def _seconds_between(later: str, earlier: str) -> str:
    """SQL for the seconds from ``earlier`` to ``later`` (two timestamp columns), to the
    microsecond: Django's own temporal subtraction (microseconds on SQLite, an interval on
    PostgreSQL). SQLite's julianday() would lose some 20 µs a row to its float of days."""
    diff, _ = connection.ops.subtract_temporals("DateTimeField", (later, []), (earlier, []))
    if connection.vendor == "postgresql":
        return f"EXTRACT(EPOCH FROM {diff})"
    if connection.vendor == "sqlite":
        return f"({diff} / 1000000.0)"
    raise NotImplementedError(
        f"the QA oracle runs on SQLite and PostgreSQL, not {connection.vendor}"
    )


def _credited_sql(entity: Entity, day: date) -> tuple[str, tuple[Any, ...]]:
    """SQL of the day's rows with their credited dwell: ``(app, url, occurred_at, dwell_s)``."""
    rows = (
        _day_rows(entity, day)
        .annotate(
            app=KeyTextTransform("app", "payload"),
            url=KeyTextTransform("url", "payload"),
            # Every monitor in one order: the oracle does not know which one had the focus.
            next_at=Window(Lead("occurred_at"), order_by=[F("occurred_at").asc(), F("id").asc()]),
        )
        .values("app", "url", "occurred_at", "next_at")
    )
    inner, params = rows.query.sql_with_params()
    gap = _seconds_between("r.next_at", "r.occurred_at")
    cap = ORACLE_DWELL_CAP_S
    sql = (
        "SELECT r.app AS app, r.url AS url, r.occurred_at AS occurred_at, "
        f"CASE WHEN r.next_at IS NULL THEN 0.0 WHEN {gap} > {cap} THEN {cap} ELSE {gap} END "
        f"AS dwell_s FROM ({inner}) r"
    )
    return sql, params


def _fetch(sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def active_seconds(entity: Entity, day: date) -> float:
    """Seconds credited to the day, all apps and monitors together."""
    credited, params = _credited_sql(entity, day)
    [(total,)] = _fetch(f"SELECT COALESCE(SUM(c.dwell_s), 0.0) FROM ({credited}) c", params)
    return round(float(total), 6)


def ranked_app_seconds(entity: Entity, day: date) -> list[tuple[str, float]]:
    """Per app, the seconds credited, most first (ties by name): the per-app minutes and the
    ranking in one query, since a rank is only the order of those sums."""
    credited, params = _credited_sql(entity, day)
    rows = _fetch(
        f"SELECT c.app, SUM(c.dwell_s) AS s FROM ({credited}) c GROUP BY c.app "
        "ORDER BY s DESC, c.app ASC",
        params,
    )
    return [(app, round(float(seconds), 6)) for app, seconds in rows]


def distinct_apps(entity: Entity, day: date | None = None) -> list[str]:
    """Every app seen in a snapshot row of the day (or of any day: ``day`` None), sorted."""
    rows = (
        _day_rows(entity, day)
        if day is not None
        else Event.objects.filter(entity=entity, kind=SNAPSHOT)
    )
    found = (
        rows.annotate(app=KeyTextTransform("app", "payload"))
        .values_list("app", flat=True)
        .distinct()
        .order_by("app")
    )
    return [app for app in found if app]


def hostname(url: str | None) -> str | None:
    """The lower-case host of a URL without a leading ``www.``; None for no host.

    Hosts are parsed here with :func:`urllib.parse.urlsplit`, the standard library's reading
    of RFC 3986, rather than with SQL string functions, which differ between the two vendors.
    """
    if not url:
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host:
        return None
    return host.removeprefix("www.")


def distinct_domains(entity: Entity, day: date | None = None) -> list[str]:
    """Every hostname of a snapshot row's URL on the day (or on any day), sorted."""
    rows = (
        _day_rows(entity, day)
        if day is not None
        else Event.objects.filter(entity=entity, kind=SNAPSHOT)
    )
    urls = (
        rows.annotate(url=KeyTextTransform("url", "payload"))
        .exclude(url__isnull=True)
        .values_list("url", flat=True)
        .distinct()
    )
    return sorted({h for h in map(hostname, urls) if h})


def activity_span(entity: Entity, day: date) -> tuple[datetime | None, datetime | None]:
    """The first and last snapshot row of the day, in the entity's local time."""
    found = _day_rows(entity, day).aggregate(first=Min("occurred_at"), last=Max("occurred_at"))
    zone = ZoneInfo(entity.timezone)
    return (
        found["first"].astimezone(zone) if found["first"] else None,
        found["last"].astimezone(zone) if found["last"] else None,
    )


def row_count(entity: Entity, day: date) -> int:
    return _day_rows(entity, day).count()


def snapshot_days(entity: Entity) -> list[tuple[date, int]]:
    """The entity's local days that have snapshot rows, with their row counts, in date order."""
    zone = ZoneInfo(entity.timezone)
    rows = (
        Event.objects.filter(entity=entity, kind=SNAPSHOT)
        .annotate(local_day=TruncDate("occurred_at", tzinfo=zone))
        .values("local_day")
        .annotate(n=Count("id"))
        .order_by("local_day")
    )
    return [(row["local_day"], row["n"]) for row in rows]


def day_figures(
    entity: Entity,
    day: date,
    *,
    apps_ever: frozenset[str] | None = None,
    domains_ever: frozenset[str] | None = None,
) -> DayFigures:
    """Every figure the questions need for one local day of one entity.

    ``apps_ever`` and ``domains_ever`` (the entity's whole history) are queried when not
    given; a caller that asks about many days passes them once.
    """
    first, last = activity_span(entity, day)
    return DayFigures(
        day=day,
        timezone=entity.timezone,
        rows=row_count(entity, day),
        active_s=active_seconds(entity, day),
        app_seconds=tuple(ranked_app_seconds(entity, day)),
        apps=tuple(distinct_apps(entity, day)),
        domains=tuple(distinct_domains(entity, day)),
        first_activity=first,
        last_activity=last,
        apps_ever=frozenset(distinct_apps(entity)) if apps_ever is None else apps_ever,
        domains_ever=(
            frozenset(distinct_domains(entity)) if domains_ever is None else domains_ever
        ),
    )
