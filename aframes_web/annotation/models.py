"""The annotation workbench: people label ProactiveStream decision points (ProactMem §4.2).

A :class:`LabelProject` names a team's streams of one scope and how many independent labels
each point needs. Each point becomes a :class:`Task`; each stream is handed to that many
annotators (:class:`Assignment`), who label its points in order, blind to each other, under
episodes of their own (:class:`Episode`). Reviewers agree with or flag a sample of submitted
labels (:class:`Review`); points whose labels agree finalise on their own, the others wait
for an adjudicator, and every final label, reopening and import is kept (:class:`Verdict`).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from aframes_web.proactivestream.models import DecisionPoint
from aframes_web.streams.models import Entity
from aframes_web.teams.models import Team

DECISIONS = (("intervene", "Intervene"), ("abstain", "Abstain"))


class LabelProject(models.Model):
    class Triage(models.TextChoices):
        NONE = "none", "No triage: streams in key order"
        RULE = "rule", "The scope's rule"
        LLM = "llm", "The configured LLM"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="label_projects")
    name = models.CharField(max_length=200)
    scope = models.CharField(max_length=16)
    guidelines = models.TextField()  # Markdown, shown beside the work
    # service -> the number its rule uses here (benchmark/labelers/numbers.py); a service not
    # named keeps the reference labeler's default.
    numbers = models.JSONField(default=dict, blank=True)
    labels_per_point = models.PositiveSmallIntegerField(default=3)
    starts_at = models.DateTimeField(null=True, blank=True)  # decision points from (inclusive)
    ends_at = models.DateTimeField(null=True, blank=True)  # up to (exclusive)
    # How long after its point an intervention still meets an opportunity (exported as
    # ``valid_until``, the matching rule of benchmark/metrics.py).
    timely_minutes = models.PositiveIntegerField()
    triage = models.CharField(max_length=8, choices=Triage.choices, default=Triage.NONE)
    review_percent = models.PositiveSmallIntegerField(default=10)  # submitted labels sampled
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="labelproject_team_name"),
        ]
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.team} / {self.name}"


class ProjectStream(models.Model):
    """One entity's stream in a project, with its place in the annotators' queues."""

    project = models.ForeignKey(LabelProject, on_delete=models.CASCADE, related_name="streams")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField(default=0)  # queue order; triage puts likely first
    points = models.PositiveIntegerField(default=0)
    screened = models.PositiveIntegerField(default=0)  # points the screener marked likely

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "entity"], name="projectstream_entity"),
        ]
        ordering = ["project", "position", "id"]

    def __str__(self) -> str:
        return f"{self.project} / {self.entity.key}"


class Verdict(models.Model):
    """One entry of a point's final-label history: auto-final, adjudicated, reopened, imported."""

    class Kind(models.TextChoices):
        AUTO = "auto", "Final: the labels agree"
        ADJUDICATED = "adjudicated", "Adjudicated"
        REOPENED = "reopened", "Reopened"
        IMPORTED = "imported", "Imported"

    task = models.ForeignKey("Task", on_delete=models.CASCADE, related_name="verdicts")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    decision = models.CharField(max_length=10, choices=DECISIONS, blank=True, default="")
    service = models.CharField(max_length=64, blank=True, default="")
    episode = models.CharField(max_length=120, blank=True, default="")
    note = models.TextField(blank=True, default="")
    provenance = models.JSONField(default=dict)  # imported labels keep theirs
    # "Episode ended here": the point whose opportunity stopped holding at this one (its
    # intervention is timely only until this point; ``selectors.final_rows``).
    ends = models.ForeignKey(
        "Task", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # An imported label's own validity (the file's ``valid_until``); None: the project's span.
    valid_until = models.DateTimeField(null=True, blank=True)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField()

    class Meta:
        ordering = ["task", "at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.decision} on task {self.task_id}"


class Task(models.Model):
    """A decision point of a project: its labels, and its final label once there is one."""

    project = models.ForeignKey(LabelProject, on_delete=models.CASCADE, related_name="tasks")
    stream = models.ForeignKey(ProjectStream, on_delete=models.CASCADE, related_name="tasks")
    point = models.ForeignKey(DecisionPoint, on_delete=models.CASCADE, related_name="+")
    seq = models.PositiveIntegerField()  # 1-based place in its stream
    at = models.DateTimeField()
    screened = models.BooleanField(null=True)  # the screener's mark; never shown as a label
    submitted = models.PositiveSmallIntegerField(default=0)  # submitted labels so far
    flagged = models.BooleanField(default=False)  # a reviewer flagged one of its labels
    final = models.OneToOneField(
        Verdict, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "point"], name="task_project_point"),
            models.UniqueConstraint(fields=["stream", "seq"], name="task_stream_seq"),
        ]
        indexes = [
            models.Index(fields=["project", "final", "submitted"], name="task_queue"),
        ]
        ordering = ["stream", "seq"]

    def __str__(self) -> str:
        return f"task {self.pk} ({self.point_id})"


class Assignment(models.Model):
    """A stream handed to an annotator: one of the project's independent labels per point."""

    stream = models.ForeignKey(ProjectStream, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="label_assignments"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["stream", "annotator"], name="assignment_once"),
        ]
        ordering = ["stream__position", "stream_id", "id"]

    def __str__(self) -> str:
        return f"{self.stream} → {self.annotator}"


class Episode(models.Model):
    """An opportunity as one annotator names it in one stream (never shared between them)."""

    stream = models.ForeignKey(ProjectStream, on_delete=models.CASCADE, related_name="episodes")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    name = models.CharField(max_length=120)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["stream", "annotator", "name"], name="episode_annotator_name"
            ),
        ]
        ordering = ["stream", "annotator", "created_at", "id"]

    def __str__(self) -> str:
        return self.name


class Label(models.Model):
    """One annotator's label of one point; a draft until ``submitted_at`` is set."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="labels")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    # The place in the stream's assignments it was made in (it stays when a place is handed on).
    place = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="labels"
    )
    decision = models.CharField(max_length=10, choices=DECISIONS, blank=True, default="")
    service = models.CharField(max_length=64, blank=True, default="")
    episode = models.ForeignKey(
        Episode, null=True, blank=True, on_delete=models.PROTECT, related_name="labels"
    )
    reopens = models.BooleanField(default=False)  # the episode's opportunity changed or reopened
    # The episode's opportunity stopped holding at this point ("episode ended here").
    ends_episode = models.BooleanField(default=False)
    rationale = models.TextField(blank=True, default="")
    draft = models.JSONField(default=dict)  # the form as last autosaved, until submitted
    sampled = models.BooleanField(default=False)  # in the cross-review sample
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task", "annotator"], name="label_once"),
        ]
        indexes = [
            models.Index(fields=["annotator", "task"], name="label_annotator_task"),
            models.Index(fields=["place", "task"], name="label_place_task"),
        ]
        ordering = ["task", "submitted_at", "id"]

    def __str__(self) -> str:
        return f"{self.annotator} {self.decision or 'draft'} on task {self.task_id}"


class Review(models.Model):
    """A reviewer's verdict on a submitted label: agree, or flag with a comment."""

    class Verdict(models.TextChoices):
        AGREE = "agree", "Agree"
        FLAG = "flag", "Flag"

    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    verdict = models.CharField(max_length=8, choices=Verdict.choices)
    comment = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["label", "reviewer"], name="review_once"),
        ]
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.reviewer} {self.verdict} label {self.label_id}"
