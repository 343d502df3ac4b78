"""The event store: entities and their append-only events (principle 5)."""

from __future__ import annotations

from django.db import models

from aframes_web.streams.records import SCOPES
from aframes_web.teams.models import Team


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
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="events")
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
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.occurred_at.isoformat()} ({self.source_key})"


class EntityDay(models.Model):
    """Per local day: how much was captured. Derived from events; rebuilt by a task."""

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="days")
    day = models.DateField()
    event_count = models.PositiveIntegerField()
    first_at = models.DateTimeField()
    last_at = models.DateTimeField()
    refreshed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity", "day"], name="entityday_entity_day_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.entity} {self.day}"
