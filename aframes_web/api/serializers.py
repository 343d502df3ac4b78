"""Input validation and output shapes of the API (no business logic here)."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

from rest_framework import serializers

from aframes_web.activity.models import DayDocument, Frame
from aframes_web.streams.models import Entity, Event
from aframes_web.streams.records import PRIVATE_FIELD, SCOPES, TEXT_FIELDS


class EntityCreateSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=100)
    scope = serializers.ChoiceField(choices=SCOPES)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    timezone = serializers.CharField(max_length=64, required=False, default="UTC")


class EntitySerializer(serializers.ModelSerializer):
    days_captured = serializers.IntegerField(read_only=True, default=None)
    event_total = serializers.IntegerField(read_only=True, default=None)
    last_activity = serializers.DateTimeField(read_only=True, default=None)

    class Meta:
        model = Entity
        fields = [
            "key",
            "name",
            "scope",
            "timezone",
            "created_at",
            "days_captured",
            "event_total",
            "last_activity",
        ]


def event_record(event: Event, *, include_text: bool) -> dict[str, Any]:
    """An event as GET returns it; this is also the JSONL format ``import_events jsonl`` reads."""
    payload = event.payload
    if event.kind == "input" and not include_text and any(k in payload for k in TEXT_FIELDS):
        payload = {k: v for k, v in payload.items() if k not in TEXT_FIELDS}
    if PRIVATE_FIELD in payload:
        # Ground truth a source carries (activity labels) never leaves through the API.
        payload = {k: v for k, v in payload.items() if k != PRIVATE_FIELD}
    return {
        "id": event.id,
        "occurred_at": event.occurred_at.isoformat(timespec="microseconds").replace("+00:00", "Z"),
        "kind": event.kind,
        "source_key": event.source_key,
        "monitor": event.monitor,
        "payload": payload,
        "received_at": event.received_at.isoformat(timespec="microseconds").replace("+00:00", "Z"),
    }


def day_summary(document: DayDocument, *, pending: bool) -> dict[str, Any]:
    """A current day document as GET .../days lists it."""
    return {
        "day": document.day.isoformat(),
        "version": document.version,
        "sha256": document.sha256,
        "frames": document.frame_count,
        "active_minutes": document.active_minutes,
        "events": document.event_count,
        "compiled_at": document.created_at.isoformat(timespec="microseconds").replace(
            "+00:00", "Z"
        ),
        "compile_ms": document.compile_ms,
        "pending": pending,
    }


def frame_record(frame: Frame, *, zone: ZoneInfo) -> dict[str, Any]:
    """A frame as GET .../frames returns it; times are local with offset, as in the document."""
    return {
        "frame_id": frame.frame_id,
        "day": frame.day.isoformat(),
        "app": frame.app,
        "site": frame.site or None,
        "monitor": frame.monitor,
        "start": frame.start.astimezone(zone).isoformat(timespec="seconds"),
        "end": frame.end.astimezone(zone).isoformat(timespec="seconds"),
        "active_s": frame.active_s,
        "wall_s": frame.wall_s,
        "keys": frame.keys,
        "clicks": frame.clicks,
        "copies": frame.copies,
        "transit": frame.transit,
        "interruptions": frame.interruptions,
        "evidence": {"rows": frame.evidence_rows, "inputs": frame.evidence_inputs},
        # Annotated by aframes_web.api.selectors.frames_listed (no document body is loaded).
        "document": {"version": frame.document_version, "sha256": frame.document_sha256},
    }
