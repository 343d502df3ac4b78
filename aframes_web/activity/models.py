"""Compiled activity: immutable day documents, the frames they hold, and the compile queue."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from aframes_web.streams.models import Entity


class DayDocument(models.Model):
    """One compiled version of an entity's local day. Never edited; the newest is current.

    A new version is stored only when the document's sha256 (everything but ``generated_at``)
    differs from the current one, so recompiling unchanged input adds nothing.
    """

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="documents")
    day = models.DateField()
    version = models.PositiveIntegerField()
    current = models.BooleanField(default=True)
    sha256 = models.CharField(max_length=64)
    compiler_version = models.CharField(max_length=64)
    params = models.JSONField()
    body = models.JSONField()
    context = models.TextField()
    # cl100k tokens of the document as JSON: counted when first asked for (document_tokens()),
    # not on every compile of a day that is still being captured.
    document_tokens = models.PositiveIntegerField(null=True, blank=True)
    context_tokens = models.PositiveIntegerField()
    watermark = models.BigIntegerField(help_text="Highest event id the compile read.")
    event_count = models.PositiveIntegerField()
    frame_count = models.PositiveIntegerField()
    active_minutes = models.FloatField()
    compile_ms = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["entity", "day", "version"], name="daydocument_version_unique"
            ),
            models.UniqueConstraint(
                fields=["entity", "day"],
                condition=Q(current=True),
                name="daydocument_one_current",
            ),
        ]
        ordering = ["entity", "day", "-version"]

    def __str__(self) -> str:
        return f"{self.entity} {self.day} v{self.version}"


class Frame(models.Model):
    """A frame of the current document of a day, materialised for querying.

    ``evidence_rows`` and ``evidence_inputs`` are the document's runs of event ids
    (``"12-15,19"``): the exact rows compiled into the frame, never a min..max range.
    """

    document = models.ForeignKey(DayDocument, on_delete=models.CASCADE, related_name="frames")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="frames")
    day = models.DateField()
    frame_id = models.CharField(max_length=40)
    position = models.PositiveIntegerField()
    app = models.CharField(max_length=200)
    site = models.CharField(max_length=255, blank=True, default="")
    monitor = models.CharField(max_length=64)
    start = models.DateTimeField()
    end = models.DateTimeField()
    active_s = models.FloatField()
    wall_s = models.FloatField()
    # Null where the recorder captures no input events (ActivityWatch): unknown, not zero.
    keys = models.PositiveIntegerField(null=True)
    clicks = models.PositiveIntegerField(null=True)
    copies = models.PositiveIntegerField(null=True)
    transit = models.BooleanField()
    interruptions = models.PositiveIntegerField()
    evidence_rows = models.TextField()
    evidence_inputs = models.TextField(blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["document", "frame_id"], name="frame_document_id"),
        ]
        indexes = [
            models.Index(fields=["entity", "start"], name="frame_entity_start_idx"),
            models.Index(fields=["entity", "frame_id"], name="frame_entity_frame_idx"),
        ]
        ordering = ["start", "position"]

    def __str__(self) -> str:
        return f"{self.frame_id} {self.app} {self.start.isoformat()}"


class CompileRequest(models.Model):
    """The compile queue's state for one (entity, local day): the claim row.

    Ingestion bumps ``requested`` and enqueues a task only when none is queued, so a burst of
    batches for one day coalesces into few compiles. A task clears ``queued`` before it reads
    the events, so a batch that commits after that point queues the next compile.
    """

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="compile_requests")
    day = models.DateField()
    requested = models.PositiveIntegerField(default=0)
    compiled = models.PositiveIntegerField(default=0)
    queued = models.BooleanField(default=False)
    queued_at = models.DateTimeField(null=True, blank=True)
    compiles = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)  # when the last compile claimed it
    last_error = models.TextField(blank=True, default="")
    last_error_at = models.DateTimeField(null=True, blank=True)
    compiled_at = models.DateTimeField(null=True, blank=True)
    # What the last stored compile read, as activity.services.window_watermark counts it: the
    # day's desktop events and the highest of their ids, and the highest id of the absences
    # before the day that may reach in. Null until a compile of the day finishes.
    read_count = models.PositiveIntegerField(null=True, blank=True)
    read_top = models.BigIntegerField(null=True, blank=True)
    lookback_top = models.BigIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity", "day"], name="compilerequest_entity_day"),
        ]

    def __str__(self) -> str:
        return f"{self.entity} {self.day} ({self.compiled}/{self.requested})"

    @property
    def pending(self) -> bool:
        return self.compiled < self.requested
