"""ProactiveStream in the service: stored decision points and benchmark runs (ProactMem §4–§5).

Decision points are derived from events (``benchmark/streams``) and can be rebuilt; a run
keeps what it measured (its figures, its files and every TP, FP and FN with both sides) so a
person can audit it long after its streams changed.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from aframes_web.streams.models import Entity, Event
from aframes_web.teams.models import Team


class DecisionPoint(models.Model):
    """A moment at which a method decides: public fields for methods, private ground truth for
    labelers only (never in an API response), and the events it summarises."""

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="decision_points")
    key = models.CharField(max_length=200)
    at = models.DateTimeField()
    public = models.JSONField()
    private = models.JSONField(default=dict)
    cites = models.JSONField(default=list)  # event ids, as the builder listed them
    # Code points are native events: decided on before that event is committed.
    event = models.ForeignKey(
        Event, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    builder = models.CharField(max_length=32)
    built_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity", "key"], name="decisionpoint_entity_key"),
        ]
        indexes = [models.Index(fields=["entity", "at"], name="decisionpoint_entity_at")]
        ordering = ["entity", "at", "key"]

    def __str__(self) -> str:
        return f"{self.entity} {self.key}"


class BenchmarkRun(models.Model):
    """One ProactiveStream run of a team: its configuration, progress and results."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="benchmark_runs")
    kind = models.CharField(max_length=32, default="proactivestream")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    # scope, entities, methods, labels, control, synthetic entity keys, out folder
    config = models.JSONField()
    code_version = models.CharField(max_length=64)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    progress_note = models.CharField(max_length=300, blank=True, default="")
    results = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} run {self.pk} ({self.status})"

    @property
    def percent(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        if not self.progress_total:
            return 0
        return min(99, int(100 * self.progress_done / self.progress_total))


class RunArtefact(models.Model):
    """A file a run wrote (results.md, streams.csv, a plot), kept with the run."""

    run = models.ForeignKey(BenchmarkRun, on_delete=models.CASCADE, related_name="artefacts")
    name = models.CharField(max_length=100)
    content_type = models.CharField(max_length=100)
    content = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "name"], name="runartefact_run_name"),
        ]
        ordering = ["run", "name"]

    def __str__(self) -> str:
        return f"run {self.run_id}: {self.name}"


class RunOutcome(models.Model):
    """A true positive, false positive or false negative of one method at one point, with the
    point as the method saw it, the decision and the label with its provenance."""

    class Kind(models.TextChoices):
        TP = "TP", "true positive"
        FP = "FP", "false positive"
        FN = "FN", "false negative"

    run = models.ForeignKey(BenchmarkRun, on_delete=models.CASCADE, related_name="outcomes")
    entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    entity_key = models.CharField(max_length=100)
    scope = models.CharField(max_length=16)
    method = models.CharField(max_length=32)
    point_key = models.CharField(max_length=200)
    at = models.DateTimeField()
    outcome = models.CharField(max_length=2, choices=Kind.choices)
    point = models.JSONField()  # {public, cites}
    decision = models.JSONField()
    label = models.JSONField()

    class Meta:
        indexes = [
            models.Index(fields=["run", "method", "outcome"], name="runoutcome_lookup"),
        ]
        ordering = ["run", "at", "id"]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.method} {self.outcome} {self.point_key}"
