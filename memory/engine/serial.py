"""Engine records as JSON-ready data and back, for storage (pure; the service stores the JSON).

Round trips are exact: ``proposal_from_json(proposal_to_json(p)) == p`` and the same for
signatures and identities, so memory rebuilt from stored rows decides exactly as memory kept
in a process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, time
from typing import Any, cast

from memory.engine.canonical import Canonical
from memory.engine.control import Identity, Key, Phase, Scope, Signature
from memory.engine.records import Predicate, Proposal, Scalar
from memory.engine.regularities import LifecycleState, RegularityState, Tally


class StoredDataInvalid(ValueError):
    """Stored memory that cannot be read back: a bug or a hand-edited row, never user input."""


def _predicate_to_json(p: Predicate) -> dict[str, Any]:
    return {"path": list(p.path), "value": p.value}


def _predicate_from_json(data: Mapping[str, Any]) -> Predicate:
    path = data.get("path")
    if not isinstance(path, list) or not all(isinstance(part, str) for part in path):
        raise StoredDataInvalid(f"predicate path {path!r} is not a list of field names")
    return Predicate(tuple(path), cast(Scalar, data.get("value")))


def proposal_to_json(p: Proposal) -> dict[str, Any]:
    return {
        "trigger": _predicate_to_json(p.trigger),
        "behavior": _predicate_to_json(p.behavior),
        "window": [p.window[0].isoformat(), p.window[1].isoformat()],
        "weekdays": None if p.weekdays is None else sorted(p.weekdays),
    }


def proposal_from_json(data: Mapping[str, Any]) -> Proposal:
    try:
        start, end = data["window"]
        weekdays = data.get("weekdays")
        return Proposal(
            trigger=_predicate_from_json(data["trigger"]),
            behavior=_predicate_from_json(data["behavior"]),
            window=(time.fromisoformat(start), time.fromisoformat(end)),
            weekdays=None if weekdays is None else frozenset(weekdays),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise StoredDataInvalid(f"stored proposal {data!r} is unreadable: {exc}") from None


# The Regularity row's columns that hold a lifecycle state (state_to_fields' keys, in order).
STATE_FIELDS = (
    "state",
    "n_f",
    "n_v",
    "observable",
    "behavior_days",
    "violation_run",
    "violation_facts",
    "last_day",
    "rejected",
    "confidence",
    "replay_confidence",
    "lift",
    "untriggered_behavior",
    "base",
    "margin",
    "trial_days",
)


def state_to_fields(s: RegularityState) -> dict[str, Any]:
    """The counters of a lifecycle state, as the Regularity row's columns (transitions apart)."""
    return {
        "state": s.state,
        "n_f": s.tally.n_f,
        "n_v": s.tally.n_v,
        "observable": s.tally.observable,
        "behavior_days": s.tally.behavior_days,
        "violation_run": s.violation_run,
        "violation_facts": list(s.violation_facts),
        "last_day": s.last_day,
        "rejected": s.rejected or "",
        "confidence": s.confidence,
        "replay_confidence": s.tally.confidence,
        "lift": s.tally.lift,
        "untriggered_behavior": s.tally.untriggered_behavior,
        "base": s.tally.base,
        "margin": s.tally.margin,
        "trial_days": s.trial_days,
    }


def state_from_fields(fields: Mapping[str, Any]) -> RegularityState:
    """The lifecycle state stored by :func:`state_to_fields` (its transitions are not needed
    to advance it; they are kept as rows)."""
    last_day = fields.get("last_day")
    if isinstance(last_day, str):
        last_day = date.fromisoformat(last_day)
    return RegularityState(
        state=cast(LifecycleState, fields["state"]),
        tally=Tally(
            int(fields["n_f"]),
            int(fields["n_v"]),
            int(fields["observable"]),
            int(fields["behavior_days"]),
            int(fields.get("untriggered_behavior") or 0),
        ),
        violation_run=int(fields["violation_run"]),
        violation_facts=tuple(fields.get("violation_facts") or ()),
        last_day=last_day,
        rejected=fields.get("rejected") or None,
        trial_days=int(fields.get("trial_days") or 0),
    )


def _key_to_json(key: Key) -> Any:
    if not key or isinstance(key[0], tuple):  # a set of canonical values (home rooms)
        return {"set": [_canonical_to_json(cast(Canonical, k)) for k in key]}
    return _canonical_to_json(cast(Canonical, key))


def _canonical_to_json(c: Canonical) -> list[Any]:
    tag, value = c
    if isinstance(value, datetime):
        return [tag, value.isoformat()]
    return [tag, value]


def _canonical_from_json(data: Sequence[Any]) -> Canonical:
    tag, value = data
    if tag == "time" and isinstance(value, str):
        return ("time", datetime.fromisoformat(value))
    return (str(tag), value)


def _key_from_json(data: Any) -> Key:
    if isinstance(data, dict):
        return tuple(_canonical_from_json(k) for k in data["set"])
    return _canonical_from_json(data)


def signature_to_json(s: Signature) -> dict[str, Any]:
    return {
        "scope": s.scope,
        "fields": [[name, _key_to_json(key)] for name, key in s.fields],
        "phase": s.phase,
    }


def signature_from_json(data: Mapping[str, Any]) -> Signature:
    try:
        return Signature(
            scope=cast(Scope, data["scope"]),
            fields=tuple((str(name), _key_from_json(key)) for name, key in data["fields"]),
            phase=cast(Phase | None, data.get("phase")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise StoredDataInvalid(f"stored signature {data!r} is unreadable: {exc}") from None


def identity_to_json(i: Identity) -> list[Any]:
    return [i[0], i[1], list(i[2])]


def identity_from_json(data: Sequence[Any]) -> Identity:
    episode, intent, ids = data
    return (str(episode), str(intent), tuple(str(x) for x in ids))
