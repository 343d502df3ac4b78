"""ProactMem's stored memory: daily trajectories with facts and citations, regularities with
their assessments and lifecycle, and decisions with their evidence (ARCHITECTURE.md,
"Data model").

Everything here is derived from events and can be rebuilt (``manage.py memory_rebuild``); the
pure engine in ``memory/engine/`` computes it, services store it.
"""

from __future__ import annotations

from django.db import models

from aframes_web.streams.models import Entity, Event


class Trajectory(models.Model):
    """One closed local day of an entity: the day's segments, accepted or rejected.

    A day is closed once (the regularity lifecycle processes a completed day once); events
    that arrive for it later are counted in ``late_events`` and do not reopen it.
    """

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="trajectories")
    day = models.DateField()
    event_count = models.PositiveIntegerField()
    segment_count = models.PositiveIntegerField()
    rejected_count = models.PositiveIntegerField()
    fact_count = models.PositiveIntegerField()
    late_events = models.PositiveIntegerField(default=0)
    extractor = models.CharField(max_length=32, default="deterministic")
    closed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity", "day"], name="trajectory_entity_day"),
        ]
        ordering = ["entity", "day"]

    def __str__(self) -> str:
        return f"{self.entity} {self.day}"


class Segment(models.Model):
    """A stretch of the day cut by one extractor rule, with the validator's verdict."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="segments")
    index = models.PositiveIntegerField()
    kind = models.CharField(max_length=64)
    source = models.CharField(max_length=100, blank=True, default="")
    start = models.DateTimeField()
    end = models.DateTimeField()
    accepted = models.BooleanField()
    reason = models.TextField(blank=True, default="")
    # Every id the segment cited, as given: an unknown one (the usual reason to reject) has no
    # event to point a foreign key at, so the list is kept beside the citation rows.
    cited_ids = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["trajectory", "index"], name="segment_index"),
        ]
        ordering = ["trajectory", "index"]

    def __str__(self) -> str:
        verdict = "accepted" if self.accepted else "rejected"
        return f"{self.kind} #{self.index} ({verdict})"


class Citation(models.Model):
    """A segment's citation of a stored event of its entity."""

    segment = models.ForeignKey(Segment, on_delete=models.CASCADE, related_name="citations")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["segment", "event"], name="citation_unique"),
        ]

    def __str__(self) -> str:
        return f"segment {self.segment_id} cites event {self.event_id}"


class Fact(models.Model):
    """A typed scalar leaf a segment claims; grounded in one cited event when accepted."""

    segment = models.ForeignKey(Segment, on_delete=models.CASCADE, related_name="facts")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    ref = models.CharField(max_length=120)  # fact:DAY/SEGMENT/ID, what decisions cite
    fact_id = models.CharField(max_length=40)
    type = models.CharField(max_length=16)
    path = models.JSONField()  # the fact's field path, outermost key first
    value = models.JSONField(null=True)
    at = models.DateTimeField(null=True, blank=True)
    grounded_event = models.ForeignKey(
        Event, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    grounded_path = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity", "ref"], name="fact_entity_ref"),
        ]
        ordering = ["segment", "fact_id"]

    def __str__(self) -> str:
        return f"{self.ref} {'.'.join(self.path)} = {self.value!r}"


# The states in rank order (selectors.REGULARITY_ORDERS): what can intervene, then what
# predicts but waits for its replay, then habits (a behaviour of every day: no trigger predicts
# it, so no lift to rank by; their absence is what memory's expectations read), then what has
# gone quiet, then what memory no longer assesses.
STATE_RANK = ("active", "weakening", "candidate", "habit", "dormant", "retired")


class Regularity(models.Model):
    """A proposed routine of an entity and where its lifecycle stands.

    ``rid`` is ``reg:<hash of the proposal>``, stable across rebuilds. The replay counters are
    the engine's ``RegularityState`` (``memory.engine.serial`` converts both ways).
    """

    class State(models.TextChoices):
        CANDIDATE = "candidate"
        HABIT = "habit"
        ACTIVE = "active"
        WEAKENING = "weakening"
        DORMANT = "dormant"
        RETIRED = "retired"  # a candidate that did not activate in its trial (regularities.py)

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="regularities")
    rid = models.CharField(max_length=20)
    proposal = models.JSONField()
    summary = models.CharField(max_length=500)
    state = models.CharField(max_length=16, choices=State.choices)
    confidence = models.FloatField()  # smoothed support ratio (lifecycle)
    replay_confidence = models.FloatField()  # n_f / (n_f + n_v)
    lift = models.FloatField()
    n_f = models.PositiveIntegerField()
    n_v = models.PositiveIntegerField()
    observable = models.PositiveIntegerField()
    behavior_days = models.PositiveIntegerField()
    # Observable days without the trigger on which the behavior happened anyway (the contrast).
    untriggered_behavior = models.PositiveIntegerField(default=0)
    base = models.FloatField(default=0.0)  # behavior_days / observable
    # How much the trigger predicts (regularities.Tally.margin): the rank of a regularity.
    margin = models.FloatField(default=0.0)
    violation_run = models.PositiveIntegerField()
    violation_facts = models.JSONField(default=list)
    last_day = models.DateField(null=True, blank=True)
    rejected = models.TextField(blank=True, default="")
    # Observable days of a candidate's trial (regularities.RETIRE_AFTER_DAYS).
    trial_days = models.PositiveIntegerField(default=0)
    proposed_on = models.DateField()
    updated_at = models.DateTimeField(auto_now=True)
    # The state's place in STATE_RANK (retired last), kept by the database from ``state``.
    state_rank = models.GeneratedField(
        expression=models.Case(
            *(models.When(state=name, then=models.Value(i)) for i, name in enumerate(STATE_RANK)),
            default=models.Value(len(STATE_RANK)),
        ),
        output_field=models.PositiveSmallIntegerField(),
        db_persist=True,
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity", "rid"], name="regularity_entity_rid"),
        ]
        indexes = [
            models.Index(fields=["entity", "state"], name="regularity_entity_state"),
            # Lists in rank order (selectors.REGULARITY_ORDERS: every state, the live ones,
            # one state) are read from this index a page at a time. Retired regularities
            # accumulate with history, and sorting every one for each page grew with it.
            models.Index(
                fields=["entity", "state_rank", "-margin", "-confidence", "rid"],
                name="regularity_rank",
            ),
        ]
        ordering = ["entity", "rid"]

    def __str__(self) -> str:
        return f"{self.rid} {self.summary}"


class RegularityTally(models.Model):
    """How many of an entity's regularities are in each state, kept by the day close that
    moves them (``services.closing``) so the memory page counts them in one small read; a
    GROUP BY over every regularity grew with history, retired ones included."""

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="regularity_tallies")
    state = models.CharField(max_length=16, choices=Regularity.State.choices)
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity", "state"], name="regularity_tally_state"),
        ]

    def __str__(self) -> str:
        return f"{self.entity_id} {self.state}: {self.count}"


class Assessment(models.Model):
    """How one day went for one regularity, with the fact references that say so."""

    class Outcome(models.TextChoices):
        FULFILLED = "fulfilled"
        VIOLATED = "violated"
        CENSORED = "censored"
        INAPPLICABLE = "inapplicable"
        NOT_TRIGGERED = "not_triggered"

    regularity = models.ForeignKey(Regularity, on_delete=models.CASCADE, related_name="assessments")
    day = models.DateField()
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    fact_refs = models.JSONField(default=list)
    behavior_in_window = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["regularity", "day"], name="assessment_day"),
        ]
        ordering = ["regularity", "day"]

    def __str__(self) -> str:
        return f"{self.regularity_id} {self.day} {self.outcome}"


class Transition(models.Model):
    """A lifecycle change with the day and the facts that caused it."""

    regularity = models.ForeignKey(Regularity, on_delete=models.CASCADE, related_name="transitions")
    seq = models.PositiveIntegerField()
    day = models.DateField()
    from_state = models.CharField(max_length=16)
    to_state = models.CharField(max_length=16)
    reason = models.TextField()
    fact_refs = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["regularity", "seq"], name="transition_seq"),
        ]
        ordering = ["regularity", "seq"]

    def __str__(self) -> str:
        return f"{self.day} {self.from_state} -> {self.to_state}"


class Decision(models.Model):
    """An intervene-or-abstain decision on one event, after intervention control.

    Stored before its event commits (the causal order), in the same transaction. ``identity``
    and ``signature`` are what control compared; a suppressed decision names the identity of
    the allowed intervention it repeated, and one said in place of a repeat names that repeat
    (``instead_of``).
    """

    class Action(models.TextChoices):
        INTERVENE = "intervene"
        ABSTAIN = "abstain"

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="decisions")
    # What was decided on: an event (decided before it was committed), or a ProactiveStream
    # decision point (a segment close, a sports slot, a frame boundary); exactly one of them.
    event = models.OneToOneField(
        Event, null=True, blank=True, on_delete=models.CASCADE, related_name="decision"
    )
    point = models.OneToOneField(
        "proactivestream.DecisionPoint",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="decision",
    )
    occurred_at = models.DateTimeField()
    day = models.DateField()
    policy = models.CharField(max_length=32)
    action = models.CharField(max_length=16, choices=Action.choices)
    proposed_action = models.CharField(max_length=16, choices=Action.choices)
    intent = models.CharField(max_length=64, blank=True, default="")
    message = models.TextField(blank=True, default="")
    evidence = models.JSONField(default=list)  # event:N, fact:DAY/S/ID, reg:HEX
    regularity_ids = models.JSONField(default=list)
    retrieved = models.JSONField(default=list)  # the regularities in context, ranked
    # Facts of the decision's own day as the decision saw them (path, value, time): that day
    # was still open, so its stored facts come later and may have grown by then.
    facts_seen = models.JSONField(default=list)
    episode = models.CharField(max_length=200, blank=True, default="")
    identity_key = models.CharField(max_length=64)  # sha256 of the identity, for lookups
    identity = models.JSONField()
    signature = models.JSONField()
    control_reason = models.CharField(max_length=32)
    suppressed = models.BooleanField(default=False)
    suppressed_by = models.JSONField(null=True, blank=True)
    # Said in place of a first proposal control suppressed as a repeat (control.control_first):
    # that proposal's intent, message, identity and the allowed identity it repeated; null
    # when the first proposal is the decision.
    instead_of = models.JSONField(null=True, blank=True)
    latency_ms = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["entity", "occurred_at"], name="decision_entity_time"),
            models.Index(
                fields=["entity", "identity_key", "action"], name="decision_entity_identity"
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(event__isnull=False, point__isnull=True)
                    | models.Q(event__isnull=True, point__isnull=False)
                ),
                name="decision_on_event_or_point",
            ),
        ]
        ordering = ["occurred_at", "id"]

    def __str__(self) -> str:
        on = f"event {self.event_id}" if self.event_id else f"point {self.point_id}"
        return f"{self.action} on {on} ({self.policy})"


class LlmCall(models.Model):
    """One recorded call to the optional LLM (``memory/llm.py``), the cache of its reply.

    A reply is looked up by (model, prompt hash) before any request, so replaying a stream
    through an LLM policy asks the model each distinct prompt once and is reproducible.
    Failed calls are recorded too (``ok`` False) but never served from the cache.
    """

    entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    model = models.CharField(max_length=200)
    prompt_hash = models.CharField(max_length=64)
    prompt = models.TextField()
    reply = models.TextField(blank=True, default="")
    ok = models.BooleanField()
    error = models.TextField(blank=True, default="")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["model", "prompt_hash"], name="llmcall_lookup")]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.model} {self.prompt_hash[:12]} {'ok' if self.ok else 'failed'}"
