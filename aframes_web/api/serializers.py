"""Input validation and output shapes of the API (no business logic here)."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, available_timezones

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from aframes_web.activity.models import DayDocument, Frame
from aframes_web.streams.models import Entity
from aframes_web.streams.records import (
    SCOPES,
    FieldInvalid,
    check_storable_text,
    format_timestamp,
)
from aframes_web.streams.services import ENTITY_KEY_RE


def _storable(value: str) -> None:
    try:
        check_storable_text(value, "")
    except FieldInvalid as problem:
        raise serializers.ValidationError(problem.message) from None


class TextField(serializers.CharField):
    """A string a database can store: no U+0000 (DRF refuses it already), no lone surrogate.

    Only a JSON string: DRF's CharField would turn a number into its text (``6.5e-111`` into
    a key of that spelling), which is not what the client meant and not what the schema says.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.validators.append(_storable)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise serializers.ValidationError(
                f"must be a JSON string, not {_json_type(data)}", code="invalid"
            )
        return str(super().to_internal_value(data))


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    return "an array" if isinstance(value, list) else "null"


@extend_schema_field({"type": "string", "pattern": ENTITY_KEY_RE.pattern, "maxLength": 100})
class EntityKeyField(TextField):
    """Checked by ``entity_create`` (its message names the rule); the schema states the rule.
    Taken as sent: a key with surrounding white space is refused, not silently trimmed into
    another key."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, **kwargs)


@extend_schema_field({"type": "string", "enum": sorted(available_timezones()), "default": "UTC"})
class TimezoneField(TextField):
    """An IANA zone name, checked by ``entity_create``."""


class TimestampField(serializers.DateTimeField):
    def to_representation(self, value: Any) -> str | None:
        return format_timestamp(value)


class EntityCreateSerializer(serializers.Serializer):
    key = EntityKeyField(max_length=100)
    scope = serializers.ChoiceField(choices=SCOPES)
    name = TextField(max_length=200, required=False, allow_blank=True)
    timezone = TimezoneField(max_length=64, required=False, default="UTC")


class EntitySerializer(serializers.ModelSerializer):
    created_at = TimestampField(read_only=True)
    days_captured = serializers.IntegerField(read_only=True, default=0)
    event_total = serializers.IntegerField(read_only=True, default=0)
    last_activity = TimestampField(read_only=True, default=None, allow_null=True)

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


def day_summary(document: DayDocument, *, pending: bool) -> dict[str, Any]:
    """A current day document as GET .../days lists it."""
    return {
        "day": document.day.isoformat(),
        "version": document.version,
        "sha256": document.sha256,
        "frames": document.frame_count,
        "active_minutes": document.active_minutes,
        "events": document.event_count,
        "compiled_at": format_timestamp(document.created_at),
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
        "start": format_timestamp(frame.start, zone, timespec="seconds"),
        "end": format_timestamp(frame.end, zone, timespec="seconds"),
        "active_s": frame.active_s,
        "wall_s": frame.wall_s,
        "keys": frame.keys,
        "clicks": frame.clicks,
        "copies": frame.copies,
        "transit": frame.transit,
        "interruptions": frame.interruptions,
        "evidence": {"rows": frame.evidence_rows, "inputs": frame.evidence_inputs},
        # Annotated by aframes_web.activity.renderings.frames_listed (no document body is loaded).
        "document": {"version": frame.document_version, "sha256": frame.document_sha256},
    }
