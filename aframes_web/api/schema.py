"""What the OpenAPI schema says about the API's answers (drf-spectacular): the shapes views build
as plain records (``present`` modules), the shared parameters, the problem responses and the
bearer-token scheme. Documentation only: nothing here validates or builds a response.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from aframes_web.api.paging import PAGE_DEFAULT, PAGE_MAX
from aframes_web.api.params import BIGINT_MAX
from aframes_web.api.problems import PROBLEM_MEDIA_TYPE, PROBLEMS, problem_body
from compiler.patterns import KINDS as PATTERN_KINDS

# --- the bearer token ---------------------------------------------------------------------------


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "aframes_web.teams.auth.BearerTokenAuthentication"
    name = "bearerToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "afr_…",
            "description": "A team's API token (`manage.py create_token TEAM NAME --scopes …`), "
            "sent as `Authorization: Bearer afr_…`. Its scopes (read, write, label, admin) "
            "decide what it may do.",
        }


# --- problems -----------------------------------------------------------------------------------


class ItemErrorShape(serializers.Serializer):
    index = serializers.IntegerField(help_text="Position of the item in the batch, from 0.")
    field = serializers.CharField(help_text="Path of the bad field inside the item.")
    message = serializers.CharField()


class ProblemShape(serializers.Serializer):
    type = serializers.CharField(help_text="A stable URI naming the kind of problem.")
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField(help_text="What was wrong, where, and what to do.")
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Validation problems: messages per field or parameter name.",
    )
    errors = ItemErrorShape(many=True, required=False, help_text="Invalid batch: one per item.")
    decisions = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="Decide batch stopped: the decisions made before the failing event.",
    )


def problem(status: int, detail: str, slug: str | None = None, **extensions: Any) -> Any:
    """A documented problem answer with one example."""
    if slug is None:
        slug = next(p.slug for p in PROBLEMS.values() if p.status == status)
    return OpenApiResponse(
        response=ProblemShape,
        description=PROBLEMS[slug].title,
        examples=[
            OpenApiExample(
                slug,
                value=problem_body(slug, detail, **extensions),
                status_codes=[str(status)],
                media_type=PROBLEM_MEDIA_TYPE,
            )
        ],
    )


def problems(*statuses: int) -> dict[Any, Any]:
    """The usual problems of an authenticated endpoint, plus ``statuses``."""
    found: dict[int, str] = {
        400: "limit: must be from 1 to 9223372036854775807, got 0.",
        401: "The API token is unknown or has been revoked.",
        403: "This needs the 'write' scope; token 'reader' has read.",
        404: "Team 'acme' has no entity 'alice-laptop'.",
        406: "Could not satisfy the request Accept header.",
        409: "An entity with key 'alice-laptop' exists already.",
        413: "The request body exceeds the limit of 33,554,432 bytes (AFRAMES_MAX_BATCH_BYTES).",
        415: "Content-Type 'text/csv' is not supported; send application/json or NDJSON.",
        422: "This point is labelled already; send reopens to revise it.",
        429: "Request was throttled. Expected available in 12 seconds.",
    }
    wanted = {400, 401, 403, 406, 429, *statuses}
    answers: dict[Any, Any] = {}
    for status in sorted(wanted):
        extensions: dict[str, Any] = {}
        if status == 400:
            extensions = {"fields": {"limit": ["must be from 1 to 9223372036854775807, got 0."]}}
        answers[(status, PROBLEM_MEDIA_TYPE)] = problem(status, found[status], **extensions)
    return answers


# --- shared parameters ----------------------------------------------------------------------------


def integer(low: int, high: int = BIGINT_MAX) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high}


def number(low: float, high: float) -> dict[str, Any]:
    return {"type": "number", "minimum": low, "maximum": high}


ID = integer(1)  # a row id in a path: a bigint
LIMIT = OpenApiParameter(
    "limit",
    integer(1),
    description=f"Items per page, at least 1 (default {PAGE_DEFAULT}; more than {PAGE_MAX} "
    f"is served as {PAGE_MAX}).",
)
CURSOR = OpenApiParameter(
    "cursor",
    OpenApiTypes.STR,
    description="Where the page starts: copy it from the previous page's `next` (opaque).",
)
PAGED = [LIMIT, CURSOR]
TIME_FROM = OpenApiParameter(
    "from",
    OpenApiTypes.DATETIME,
    description="From this moment (inclusive), ISO 8601 with an offset, e.g. "
    "2026-03-02T09:00:00+01:00.",
)
TIME_TO = OpenApiParameter(
    "to", OpenApiTypes.DATETIME, description="Up to this moment (exclusive), with an offset."
)
DAY_FROM = OpenApiParameter(
    "from", OpenApiTypes.DATE, description="From this local day (inclusive), e.g. 2026-03-02."
)
DAY_TO = OpenApiParameter("to", OpenApiTypes.DATE, description="Up to this local day (inclusive).")
INCLUDE_TEXT = OpenApiParameter(
    "include_text",
    OpenApiTypes.STR,
    enum=["1", "true", "0", "false"],
    description="`1`: include typed text and clipboard content (needs the admin scope).",
)
KEY = OpenApiParameter(
    "key", OpenApiTypes.STR, OpenApiParameter.PATH, description="The entity's key."
)


def page_of(name: str, item: Any, **extra: serializers.Field) -> Any:
    """The page shape every list answers: ``results`` and the URL of the ``next`` page."""
    return type(
        name,
        (serializers.Serializer,),
        {
            "results": item(many=True),
            "next": serializers.URLField(
                allow_null=True, help_text="The next page, or null on the last."
            ),
            **extra,
            "__module__": __name__,
        },
    )


# --- records ------------------------------------------------------------------------------------


class EventShape(serializers.Serializer):
    id = serializers.IntegerField()
    occurred_at = serializers.DateTimeField()
    kind = serializers.CharField()
    source_key = serializers.CharField()
    monitor = serializers.CharField()
    payload = serializers.DictField()
    received_at = serializers.DateTimeField()


class DifferingRepeatShape(serializers.Serializer):
    index = serializers.IntegerField(help_text="The item that repeated a source_key.")
    source_key = serializers.CharField()
    kept_index = serializers.IntegerField(help_text="The earlier item with that key, stored.")


class IngestAnswerShape(serializers.Serializer):
    accepted = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    dropped_text_fields = serializers.IntegerField(
        required=False, help_text="Without decide: text fields dropped (AFRAMES_STORE_INPUT_TEXT)."
    )
    differing_repeats = DifferingRepeatShape(
        many=True,
        required=False,
        help_text="Only when items repeated a source_key with other content (first 100).",
    )
    differing_repeats_count = serializers.IntegerField(required=False)
    decisions = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="With decide=1: each event's decision (as POST …/decide answers).",
    )


class DaySummaryShape(serializers.Serializer):
    day = serializers.DateField()
    version = serializers.IntegerField()
    sha256 = serializers.CharField()
    frames = serializers.IntegerField()
    active_minutes = serializers.FloatField()
    events = serializers.IntegerField()
    compiled_at = serializers.DateTimeField()
    compile_ms = serializers.FloatField()
    pending = serializers.BooleanField(help_text="Newer events wait for a recompile.")


class EvidenceRefsShape(serializers.Serializer):
    rows = serializers.CharField(help_text="Event ids of the frame's snapshots, as runs: 12-15,19.")
    inputs = serializers.CharField(help_text="Event ids of its input events, as runs.")


class DocumentRefShape(serializers.Serializer):
    version = serializers.IntegerField()
    sha256 = serializers.CharField()


class FrameShape(serializers.Serializer):
    frame_id = serializers.CharField()
    day = serializers.DateField()
    app = serializers.CharField()
    site = serializers.CharField(allow_null=True)
    monitor = serializers.CharField()
    start = serializers.DateTimeField(help_text="Local time with the entity's offset.")
    end = serializers.DateTimeField()
    active_s = serializers.FloatField()
    wall_s = serializers.FloatField()
    keys = serializers.IntegerField(
        allow_null=True, help_text="Null where the recorder captures no input events."
    )
    clicks = serializers.IntegerField(allow_null=True)
    copies = serializers.IntegerField(allow_null=True)
    transit = serializers.BooleanField()
    interruptions = serializers.IntegerField()
    evidence = EvidenceRefsShape()
    document = DocumentRefShape()


class EvidenceShape(serializers.Serializer):
    results = EventShape(many=True)
    missing = serializers.ListField(
        child=serializers.IntegerField(), help_text="Asked-for ids this entity has no event of."
    )


class ControlShape(serializers.Serializer):
    reason = serializers.CharField()
    suppressed = serializers.BooleanField()
    identity = serializers.JSONField()
    suppressed_by = serializers.JSONField(allow_null=True)
    instead_of = serializers.JSONField(
        allow_null=True,
        help_text="The first proposal, suppressed as a repeat, that this decision was said in "
        "place of (intent, message, identity, suppressed_by); null when it is the decision.",
    )
    signature = serializers.JSONField()


class DecisionShape(serializers.Serializer):
    id = serializers.IntegerField()
    event_id = serializers.IntegerField(allow_null=True)
    point_id = serializers.IntegerField(allow_null=True)
    occurred_at = serializers.DateTimeField()
    day = serializers.DateField()
    policy = serializers.CharField()
    action = serializers.ChoiceField(choices=["intervene", "abstain"])
    proposed_action = serializers.ChoiceField(choices=["intervene", "abstain"])
    intent = serializers.CharField(allow_blank=True)
    message = serializers.CharField(allow_blank=True)
    evidence = serializers.ListField(child=serializers.CharField())
    regularities = serializers.ListField(child=serializers.JSONField())
    facts_seen = serializers.ListField(child=serializers.JSONField())
    episode = serializers.CharField(allow_blank=True)
    control = ControlShape()
    latency_ms = serializers.FloatField()


class DecidedShape(DecisionShape):
    duplicate = serializers.BooleanField(help_text="The event was stored already; no new decision.")


class TrajectorySummaryShape(serializers.Serializer):
    day = serializers.DateField()
    events = serializers.IntegerField()
    segments = serializers.IntegerField()
    rejected = serializers.IntegerField()
    facts = serializers.IntegerField()
    late_events = serializers.IntegerField()
    closed_at = serializers.DateTimeField()


class GroundingShape(serializers.Serializer):
    event_id = serializers.IntegerField()
    path = serializers.JSONField()


class FactShape(serializers.Serializer):
    ref = serializers.CharField()
    id = serializers.CharField()
    type = serializers.CharField()
    path = serializers.ListField(child=serializers.JSONField())
    value = serializers.JSONField(allow_null=True)
    at = serializers.DateTimeField(allow_null=True)
    grounded_in = GroundingShape(allow_null=True)


class SegmentShape(serializers.Serializer):
    index = serializers.IntegerField()
    kind = serializers.CharField()
    source = serializers.CharField(allow_blank=True)
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    accepted = serializers.BooleanField()
    reason = serializers.CharField(allow_null=True)
    citations = serializers.ListField(child=serializers.IntegerField())
    facts = FactShape(many=True)


class TrajectoryShape(TrajectorySummaryShape):
    segments = SegmentShape(many=True)  # type: ignore[assignment]


class ReplayShape(serializers.Serializer):
    fulfilled = serializers.IntegerField()
    violated = serializers.IntegerField()
    confidence = serializers.FloatField()
    lift = serializers.FloatField()
    observable_days = serializers.IntegerField()
    behavior_days = serializers.IntegerField()
    base_rate = serializers.FloatField()
    contrast_days = serializers.IntegerField()
    untriggered_behavior_days = serializers.IntegerField()
    margin = serializers.FloatField()


class RegularitySummaryShape(serializers.Serializer):
    id = serializers.CharField()
    summary = serializers.CharField(help_text="The regularity in words.")
    proposal = serializers.JSONField(help_text="The structure the sentence says.")
    state = serializers.ChoiceField(
        choices=["candidate", "active", "weakening", "habit", "dormant", "retired"]
    )
    confidence = serializers.FloatField()
    replay = ReplayShape()
    consecutive_violations = serializers.IntegerField()
    last_day = serializers.DateField(allow_null=True)
    proposed_on = serializers.DateField()
    rejected = serializers.CharField(allow_null=True)


class AssessmentShape(serializers.Serializer):
    day = serializers.DateField()
    outcome = serializers.CharField()
    facts = serializers.ListField(child=serializers.CharField())


class TransitionShape(serializers.Serializer):
    day = serializers.DateField()
    to = serializers.CharField()
    reason = serializers.CharField()
    facts = serializers.ListField(child=serializers.CharField())

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["from"] = serializers.CharField()  # a keyword in Python, a key in the JSON
        return fields


class RegularityShape(RegularitySummaryShape):
    assessments = AssessmentShape(many=True)
    transitions = TransitionShape(many=True)


class ProgressShape(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.IntegerField()
    note = serializers.CharField(allow_blank=True)


class RunSummaryShape(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()
    scope = serializers.CharField(allow_null=True)
    methods = serializers.ListField(child=serializers.CharField())
    labels = serializers.JSONField(allow_null=True)
    control = serializers.BooleanField()
    streams = serializers.IntegerField()
    progress = ProgressShape()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField(allow_blank=True)


class RunShape(RunSummaryShape):
    entities = serializers.ListField(child=serializers.CharField())
    synthetic = serializers.ListField(child=serializers.JSONField())
    code_version = serializers.CharField()
    results = serializers.JSONField(allow_null=True)
    files = serializers.ListField(child=serializers.CharField())


class ProjectCountsShape(serializers.Serializer):
    points = serializers.IntegerField()
    complete = serializers.IntegerField()
    final = serializers.IntegerField()
    waiting = serializers.IntegerField()
    flagged = serializers.IntegerField()
    labels = serializers.IntegerField()


class ServiceNumberShape(serializers.Serializer):
    service = serializers.CharField()
    number = serializers.FloatField()
    unit = serializers.CharField()
    sentence = serializers.CharField(help_text="The service's rule with its number in it.")
    default = serializers.FloatField(help_text="The reference labeler's number.")


class ProjectShape(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    scope = serializers.CharField()
    labels_per_point = serializers.IntegerField()
    starts_at = serializers.DateTimeField(allow_null=True)
    ends_at = serializers.DateTimeField(allow_null=True)
    timely_minutes = serializers.IntegerField()
    triage = serializers.CharField()
    review_percent = serializers.IntegerField()
    guidelines = serializers.CharField(allow_blank=True)
    numbers = ServiceNumberShape(many=True)
    created_at = serializers.DateTimeField()
    counts = ProjectCountsShape()


class AssignmentShape(serializers.Serializer):
    project = serializers.IntegerField()
    stream = serializers.CharField()
    points = serializers.IntegerField()
    labelled = serializers.IntegerField()
    next_task = serializers.IntegerField(allow_null=True)


class PointShape(serializers.Serializer):
    key = serializers.CharField()
    words = serializers.CharField()
    public = serializers.JSONField()


class HistoryEventShape(serializers.Serializer):
    id = serializers.IntegerField()
    occurred_at = serializers.DateTimeField()
    kind = serializers.CharField()
    monitor = serializers.CharField(allow_blank=True)
    payload = serializers.JSONField()


class HistoryShape(serializers.Serializer):
    page = serializers.IntegerField()
    older = serializers.BooleanField()
    events = HistoryEventShape(many=True)


class EpisodeShape(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    labels = serializers.IntegerField()
    last_served = serializers.IntegerField(allow_null=True)


class OwnLabelShape(serializers.Serializer):
    submitted = serializers.BooleanField()
    decision = serializers.CharField(allow_null=True)
    service = serializers.CharField(allow_null=True)
    episode = serializers.IntegerField(allow_null=True)
    reopens = serializers.BooleanField()
    ends_episode = serializers.BooleanField()
    rationale = serializers.CharField(allow_blank=True)
    draft = serializers.JSONField()


class TaskProgressShape(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class TaskShape(serializers.Serializer):
    task = serializers.IntegerField()
    project = serializers.IntegerField()
    stream = serializers.CharField()
    seq = serializers.IntegerField()
    points = serializers.IntegerField()
    at = serializers.DateTimeField()
    point = PointShape()
    final = serializers.BooleanField()
    history = HistoryShape()
    episodes = EpisodeShape(many=True)
    label = OwnLabelShape(allow_null=True)
    progress = TaskProgressShape()


class TaskSubmittedShape(TaskShape):
    next_task = serializers.IntegerField(allow_null=True)


class LabelInputShape(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["intervene", "abstain"])
    service = serializers.CharField(required=False, allow_blank=True)
    episode = serializers.IntegerField(required=False, allow_null=True)
    new_episode = serializers.CharField(required=False, allow_blank=True)
    same_as_previous = serializers.BooleanField(
        required=False, help_text="Name the episode of your label of the previous point."
    )
    reopens = serializers.BooleanField(required=False)
    ends_episode = serializers.BooleanField(
        required=False,
        help_text="The episode's opportunity stopped holding here: its intervention is timely "
        "only until this point in the export and the benchmark.",
    )
    rationale = serializers.CharField(required=False, allow_blank=True)


class EventInputShape(serializers.Serializer):
    occurred_at = serializers.DateTimeField(help_text="ISO 8601 with an offset.")
    kind = serializers.ChoiceField(
        choices=["snapshot", "input", "elements", "absence", "observation"]
    )
    source_key = serializers.CharField(
        required=False, help_text="Makes ingestion idempotent; derived from the content if absent."
    )
    monitor = serializers.CharField(required=False)
    payload = serializers.DictField()


# --- examples -----------------------------------------------------------------------------------

EVENT_EXAMPLE = {
    "id": 812,
    "occurred_at": "2026-03-02T08:00:05.000000Z",
    "kind": "snapshot",
    "source_key": "sp:frame:4411",
    "monitor": "0",
    "payload": {"app": "Code", "window": "main.py"},
    "received_at": "2026-03-02T08:00:06.125000Z",
}
NEXT_EXAMPLE = "https://aframes.example/api/v1/entities/alice-laptop/events?cursor=ZXlK…"


def example(name: str, value: Any, **kwargs: Any) -> OpenApiExample:
    return OpenApiExample(name, value=value, response_only=True, **kwargs)


def page_example(name: str, item: Any) -> OpenApiExample:
    return example(name, {"results": [item], "next": NEXT_EXAMPLE})


# --- workflow patterns and routines (Activity Frames §7.1) --------------------------------------


class WindowShape(serializers.Serializer):
    days = serializers.IntegerField(help_text="Local days with desktop activity read.")
    to = serializers.DateField(allow_null=True, help_text="The newest of them.")

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["from"] = serializers.DateField(allow_null=True, help_text="The oldest of them.")
        return fields


class PatternEvidenceShape(serializers.Serializer):
    frames = serializers.ListField(child=serializers.CharField(), help_text="Frame ids.")
    rows = serializers.CharField(help_text="Event ids as runs: 12-15,19.")


class PatternShape(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(PATTERN_KINDS))
    label = serializers.CharField(help_text="The pattern in words (captured, untrusted text).")
    count = serializers.IntegerField()
    evidence = PatternEvidenceShape()


class PatternsShape(serializers.Serializer):
    entity = serializers.CharField()
    window = WindowShape()
    patterns = PatternShape(many=True)


class RoutineStepShape(serializers.Serializer):
    op = serializers.ChoiceField(choices=["click", "type", "navigate"])
    target = serializers.CharField()
    role = serializers.CharField(allow_null=True)
    app = serializers.CharField()
    url_template = serializers.CharField(allow_null=True)
    destructive = serializers.BooleanField(
        help_text="The target begins with a destructive verb: replay needs an explicit allow."
    )


class OccurrenceShape(serializers.Serializer):
    day = serializers.DateField()
    start = serializers.DateTimeField(help_text="Local time with the entity's offset.")
    end = serializers.DateTimeField()
    frames = serializers.ListField(child=serializers.CharField())
    evidence = serializers.CharField(help_text="Event ids of its steps, as runs.")


class RoutineShape(serializers.Serializer):
    id = serializers.CharField()
    granularity = serializers.ChoiceField(choices=["action", "url"])
    length = serializers.IntegerField()
    count = serializers.IntegerField()
    steps = RoutineStepShape(many=True)
    occurrences = OccurrenceShape(many=True)
    plan = serializers.JSONField(help_text="The guarded skill plan (compiler.replay.plan).")
    script = serializers.CharField(help_text="The minimal replay script, one line per step.")
    c_agent = serializers.FloatField(help_text="Modelled tokens to re-derive it from screens.")
    plan_tokens = serializers.IntegerField()
    script_tokens = serializers.IntegerField()
    r_inject = serializers.FloatField(help_text="C_agent / plan tokens.")
    r_info = serializers.FloatField(help_text="C_agent / script tokens.")
    guard_coverage = serializers.FloatField()


class RoutinesShape(serializers.Serializer):
    entity = serializers.CharField()
    window = WindowShape()
    granularity = serializers.ChoiceField(choices=["action", "url"])
    screen = serializers.CharField()
    steps = serializers.IntegerField(help_text="Steps in the window's stream.")
    routines = RoutineShape(many=True)
    summary = serializers.JSONField(
        help_text="R distributions, h_raw, h_specific, hold-out and ceiling (compiler.cost)."
    )
