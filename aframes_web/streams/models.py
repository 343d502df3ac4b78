"""The event store: entities and their append-only events (principle 5)."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import models
from django.db.models import Q

from aframes_web.streams.records import SCOPES
from aframes_web.teams.models import Team
from compiler.sources.events import keyed_row_id, row_key


class Entity(models.Model):
    """Whatever a stream is about: a person's desktop, a participant, a home, a repository."""

    class Scope(models.TextChoices):
        DESKTOP = "desktop", "Desktop"
        SPORTS = "sports", "Sports"
        HOME = "home", "Home"
        CODE = "code", "Code"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="entities")
    scope = models.CharField(max_length=16, choices=Scope.choices)
    key = models.CharField(max_length=100)
    name = models.CharField(max_length=200)
    timezone = models.CharField(max_length=64, default="UTC")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "key"], name="entity_team_key_unique"),
        ]
        verbose_name_plural = "entities"

    def __str__(self) -> str:
        return f"{self.team.slug}/{self.key}"


assert tuple(Entity.Scope.values) == SCOPES  # one list of scopes, checked at import


class Event(models.Model):
    """One raw event. Never edited: everything derived from it can be rebuilt."""

    id = models.BigAutoField(primary_key=True)
    # No index of its own: the (entity, occurred_at) index and the (entity, source_key) unique
    # constraint both lead with entity, and a third index costs every insert.
    entity = models.ForeignKey(
        Entity, on_delete=models.CASCADE, related_name="events", db_index=False
    )
    occurred_at = models.DateTimeField()
    kind = models.CharField(max_length=16)
    source_key = models.CharField(max_length=200)
    monitor = models.CharField(max_length=64, blank=True, default="")
    payload = models.JSONField()
    received_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["entity", "source_key"], name="event_entity_source_key_unique"
            ),
        ]
        indexes = [
            models.Index(fields=["entity", "occurred_at"], name="event_entity_time_idx"),
            # Absences are a sliver of the rows, and every compile and every context window
            # looks back a day for those that reach in (activity.services): a partial index
            # makes that look-up instant and costs only absences' inserts.
            models.Index(
                fields=["entity", "occurred_at"],
                condition=models.Q(kind="absence"),
                name="event_absence_time_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.occurred_at.isoformat()} ({self.source_key})"

    @property
    def row_id(self) -> int:
        """The id compiled documents cite this event by (:func:`row_id`)."""
        return row_id(self.pk, self.source_key)


class EventTally(models.Model):
    """How many events an entity has stored, kept by every insert in the insert's own
    transaction (``streams.services``), so that "has anything arrived out of order?" is one
    indexed look-up and a count of the few newest rows, where counting every event of a year
    of history costs a read of all of it.

    Why a row of its own, not a field of the entity: an entity saved from a stale copy would
    write an old count back. The row is added to only at the end of an insert's transaction,
    so concurrent batches of one entity wait for each other only for their commit. Events are
    never deleted but with their entity, and the count goes with it.
    """

    entity = models.OneToOneField(
        Entity, on_delete=models.CASCADE, primary_key=True, related_name="tally"
    )
    stored = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.entity_id}: {self.stored} events"


def row_id(pk: int, source_key: str | None) -> int:
    """The id a compiled document cites an event by: the one its source key fixes (an
    ActivityWatch row keeps its reader's id, so the service and ``python -m compiler day``
    cite the same rows), otherwise the event's own id. The two spaces never meet."""
    keyed = keyed_row_id(source_key)
    return pk if keyed is None else keyed


def rows_named(ids: Iterable[int]) -> Q:
    """Events whose :func:`row_id` is among ``ids``: by key beyond the store's ids, else by id."""
    own: list[int] = []
    keys: list[str] = []
    for row in ids:
        named = row_key(row)
        if named is None:
            own.append(row)
        else:
            keys.extend(named)
    found = Q(pk__in=own) if own else Q(pk__in=[])
    return found | Q(source_key__in=keys) if keys else found


class EntityDay(models.Model):
    """Per local day: how much was captured. Derived from events; rebuilt by a task."""

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="days")
    day = models.DateField()
    event_count = models.PositiveIntegerField()
    first_at = models.DateTimeField()
    last_at = models.DateTimeField()
    # The highest event id counted: with event_count, what reconciliation checks against the
    # events (aframes_web/reconcile).
    watermark = models.BigIntegerField(default=0)
    refreshed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity", "day"], name="entityday_entity_day_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.entity} {self.day}"


class ImportJob(models.Model):
    """A file uploaded through the dashboard, imported by a worker with visible progress."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="import_jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    format = models.CharField(max_length=32)
    entity_key = models.CharField(max_length=100)
    scope = models.CharField(max_length=16, blank=True)
    timezone = models.CharField(max_length=64, blank=True)
    original_name = models.CharField(max_length=255)
    stored_path = models.CharField(max_length=500)
    size_bytes = models.BigIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress_bytes = models.BigIntegerField(default=0)
    read = models.PositiveIntegerField(default=0)
    imported = models.PositiveIntegerField(default=0)
    duplicates = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True)
    report = models.TextField(blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Runs begun (a worker lost mid-import leaves the job to a later one) and the last sign
    # of life of the current run; reconciliation resumes or fails a job nobody runs.
    attempts = models.PositiveIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.format} {self.original_name} ({self.status})"

    @property
    def percent(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        return min(99, int(100 * self.progress_bytes / self.size_bytes)) if self.size_bytes else 0


class SensorName(models.Model):
    """What a sensor is called on every page: the importer's best guess from the events'
    own names (``streams.names``), until an owner corrects it. A guess never overwrites a
    name; a correction is kept with who made it and when."""

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="sensor_names")
    sensor = models.CharField(max_length=200)  # as the events name it (attributes.sensor)
    name = models.CharField(max_length=200)
    room = models.CharField(max_length=100, blank=True, default="")
    kind = models.CharField(max_length=32, blank=True, default="")
    corrected_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    corrected_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity", "sensor"], name="sensorname_entity_sensor")
        ]

    def __str__(self) -> str:
        return f"{self.sensor}: {self.name}"
