"""The services of each scope: the vocabulary labelers and methods share (ProactMem §4.1).

Every method sees the same catalogue, and a reference label names the service its opportunity
calls for; an intervention is a true positive only when it names that service (the matching
rule in ``benchmark/metrics.py``). The service implementations a method uses live with the
method (ProactMem's in ``memory/engine/catalogue.py``, whose intents a test holds equal to
these ids); this module is only the shared list, so labelers need no method code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    """One service: its id (a method's intent) and the opportunity it serves, in words."""

    id: str
    opportunity: str


CATALOGUE: Mapping[str, tuple[ServiceSpec, ...]] = MappingProxyType(
    {
        "home": (
            ServiceSpec(
                "check_in_routine",
                "a usual activity of this home has not begun by its usual time",
            ),
            ServiceSpec(
                "check_device",
                "a door or appliance has been left open or on far longer than usual",
            ),
            ServiceSpec(
                "wellbeing_check",
                "the home has been still for unusually long at a time it is usually active",
            ),
        ),
        "sports": (
            ServiceSpec(
                "suggest_walk",
                "sedentary in the hour before a slot at which this person is usually active",
            ),
            ServiceSpec(
                "step_goal_nudge",
                "steps so far today are far behind this person's usual pace at this slot",
            ),
            ServiceSpec(
                "stand_break",
                "most of the last hour was spent sitting while the tracker was worn",
            ),
        ),
        "code": (
            ServiceSpec(
                "review_nudge",
                "a pull request has waited for a first review past this repository's usual "
                "review time",
            ),
            ServiceSpec(
                "ci_follow_up",
                "a failed check run has not been followed up",
            ),
            ServiceSpec(
                "triage_nudge",
                "an issue has waited for a first response past this repository's usual "
                "response time",
            ),
        ),
        "desktop": (
            ServiceSpec(
                "resume_focus",
                "the day's usual main work app has not been opened by its usual time",
            ),
            ServiceSpec(
                "take_break",
                "a long stretch of work without a break",
            ),
            ServiceSpec(
                "refocus",
                "attention split across many apps in a short time",
            ),
        ),
    }
)


def service_ids(scope: str) -> tuple[str, ...]:
    try:
        return tuple(s.id for s in CATALOGUE[scope])
    except KeyError:
        raise ValueError(f"unknown scope {scope!r}; use one of {', '.join(CATALOGUE)}") from None
