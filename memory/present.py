"""Stored memory as plain JSON-ready records: the one shape the API, MCP and pages show."""

from __future__ import annotations

from typing import Any

from aframes_web.streams.records import format_timestamp
from memory.models import Decision, Regularity, Segment, Trajectory


def decision_record(d: Decision) -> dict[str, Any]:
    return {
        "id": d.pk,
        "event_id": d.event_id,
        "point_id": d.point_id,
        "occurred_at": format_timestamp(d.occurred_at),
        "day": d.day.isoformat(),
        "policy": d.policy,
        "action": d.action,
        "proposed_action": d.proposed_action,
        "intent": d.intent,
        "message": d.message,
        "evidence": list(d.evidence),
        "regularities": list(d.retrieved),
        "facts_seen": list(d.facts_seen),
        "episode": d.episode,
        "control": {
            "reason": d.control_reason,
            "suppressed": d.suppressed,
            "identity": d.identity,
            "suppressed_by": d.suppressed_by,
            "instead_of": d.instead_of,
            "signature": d.signature,
        },
        "latency_ms": d.latency_ms,
    }


def segment_record(s: Segment) -> dict[str, Any]:
    return {
        "index": s.index,
        "kind": s.kind,
        "source": s.source,
        "start": format_timestamp(s.start),
        "end": format_timestamp(s.end),
        "accepted": s.accepted,
        "reason": s.reason or None,
        "citations": list(s.cited_ids),
        "facts": [
            {
                "ref": f.ref,
                "id": f.fact_id,
                "type": f.type,
                "path": list(f.path),
                "value": f.value,
                "at": format_timestamp(f.at),
                "grounded_in": (
                    {"event_id": f.grounded_event_id, "path": f.grounded_path}
                    if f.grounded_event_id
                    else None
                ),
            }
            for f in s.facts.all()
        ],
    }


def trajectory_summary(t: Trajectory) -> dict[str, Any]:
    return {
        "day": t.day.isoformat(),
        "events": t.event_count,
        "segments": t.segment_count,
        "rejected": t.rejected_count,
        "facts": t.fact_count,
        "late_events": t.late_events,
        "closed_at": format_timestamp(t.closed_at),
    }


def trajectory_record(t: Trajectory) -> dict[str, Any]:
    return {**trajectory_summary(t), "segments": [segment_record(s) for s in t.segments.all()]}


def regularity_summary(r: Regularity) -> dict[str, Any]:
    return {
        "id": r.rid,
        # The regularity in words (memory.engine.words.regularity); ``proposal`` is the
        # structure it says.
        "summary": r.summary,
        "proposal": r.proposal,
        "state": r.state,
        "confidence": round(r.confidence, 4),
        "replay": {
            "fulfilled": r.n_f,
            "violated": r.n_v,
            "confidence": round(r.replay_confidence, 4),
            "lift": round(r.lift, 4),
            "observable_days": r.observable,
            "behavior_days": r.behavior_days,
            "base_rate": round(r.base, 4),
            "contrast_days": r.observable - r.n_f - r.n_v,
            "untriggered_behavior_days": r.untriggered_behavior,
            "margin": round(r.margin, 4),
        },
        "consecutive_violations": r.violation_run,
        "last_day": r.last_day.isoformat() if r.last_day else None,
        "proposed_on": r.proposed_on.isoformat(),
        "rejected": r.rejected or None,
    }


def regularity_record(r: Regularity) -> dict[str, Any]:
    return {
        **regularity_summary(r),
        "assessments": [
            {"day": a.day.isoformat(), "outcome": a.outcome, "facts": list(a.fact_refs)}
            for a in r.assessments.all()
        ],
        "transitions": [
            {
                "day": t.day.isoformat(),
                "from": t.from_state,
                "to": t.to_state,
                "reason": t.reason,
                "facts": list(t.fact_refs),
            }
            for t in r.transitions.all()
        ],
    }
