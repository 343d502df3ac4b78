"""The number behind each service's words, for people who label.

The catalogue says "far longer than usual" and "unusually long" (``benchmark/streams/catalogue``);
a person needs a number. Each service has one number a project owner may set, and a sentence
that states the whole rule with it; the default is the reference labeler's own (the labels of
record, ``registry.LABELERS``), read from its constants, so the words a person labels by and the
rule the labeler applies cannot drift apart. The rest of each rule (how "usual" is learned) is
fixed and stated in the sentence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from benchmark.labelers import code, desktop, home, sports
from benchmark.streams.catalogue import service_ids


@dataclass(frozen=True, slots=True)
class ServiceNumber:
    """One service's number: its default, unit, bounds, and the rule as a sentence with
    ``{n}`` where the number goes."""

    service: str
    default: float
    unit: str
    sentence: str
    minimum: float = 0.0
    maximum: float = 10_000.0


def _minutes(value: Any) -> float:
    return value.total_seconds() / 60


NUMBERS: Mapping[str, tuple[ServiceNumber, ...]] = MappingProxyType(
    {
        "home": (
            ServiceNumber(
                "check_in_routine",
                _minutes(home.GRACE_V2),
                "minutes",
                "Intervene when being up, a meal or medication has not begun {n} minutes after "
                "its usual time (the third quartile of its first starts on earlier days) and "
                "none of its usual rooms has had any activity today.",
            ),
            ServiceNumber(
                "check_device",
                _minutes(home.DEVICE_FLOOR),
                "minutes",
                "Intervene when a door or appliance has been open or on for at least {n} "
                "minutes and for at least twice its usual longest (the 95th percentile of its "
                "earlier open times).",
            ),
            ServiceNumber(
                "wellbeing_check",
                _minutes(home.STILL_FLOOR),
                "minutes",
                "Intervene when the home has been quiet for at least {n} minutes and for 1.5 "
                "times the longest quiet seen before during the same activity, while the "
                "resident is at home and awake (a seat or bed in use explains a quiet).",
            ),
        ),
        "sports": (
            ServiceNumber(
                "suggest_walk",
                float(sports.SEDENTARY_STEPS),
                "steps",
                "Intervene when the hour before the slot had fewer than {n} steps and at most "
                f"{sports.SEDENTARY_ACTIVE_MIN} active minutes, with the tracker worn, and "
                f"this hour was active on at least {sports.USUAL_SHARE:.0%} of at least "
                f"{sports.MIN_DAYS} earlier days.",
            ),
            ServiceNumber(
                "step_goal_nudge",
                100 * sports.PACE_SHARE,
                "% of the usual pace",
                "At noon, mid-afternoon and evening, intervene when the steps so far today are "
                "below {n} % of this person's median by this slot on earlier days (once a "
                "day).",
                maximum=100,
            ),
            ServiceNumber(
                "stand_break",
                float(sports.SITTING_MIN),
                "minutes",
                "Intervene when at least {n} minutes of the hour before the slot were "
                "sedentary with the tracker worn, and such an hour at this slot happened on "
                f"at most {sports.UNUSUAL_SHARE:.0%} of earlier days.",
                maximum=60,
            ),
        ),
        "code": (
            ServiceNumber(
                "review_nudge",
                _minutes(code.WAIT_FLOOR) / 60,
                "hours",
                "Intervene when a pull request has waited for a first review for at least {n} "
                "hours and longer than three quarters of this repository's earlier first "
                "reviews took (work in progress and cherry-picks excepted).",
            ),
            ServiceNumber(
                "ci_follow_up",
                _minutes(code.FOLLOW_UP_DEFAULT) / 60,
                "hours",
                "Intervene when a failed check has had no later run of the same workflow on "
                "the same branch and no push to it for this repository's usual time to a "
                "follow-up (the median of those seen), or for {n} hours while fewer than "
                f"{code.MIN_SAMPLES} are known.",
            ),
            ServiceNumber(
                "triage_nudge",
                _minutes(code.WAIT_FLOOR) / 60,
                "hours",
                "Intervene when an issue has waited for a first response for at least {n} "
                "hours and longer than three quarters of this repository's earlier first "
                "responses took (maintainers' own issues excepted).",
            ),
        ),
        "desktop": (
            ServiceNumber(
                "resume_focus",
                _minutes(desktop.GRACE),
                "minutes",
                "Intervene when the day's usual main app has not appeared {n} minutes after "
                "its usual first use (the third quartile of its first frames on earlier days).",
            ),
            ServiceNumber(
                "take_break",
                _minutes(desktop.WORK_LIMIT),
                "minutes",
                "Intervene after {n} minutes of work without a break of "
                f"{_minutes(desktop.BREAK_MIN):.0f} minutes.",
            ),
            ServiceNumber(
                "refocus",
                float(desktop.SWITCH_FLOOR),
                "frames in 30 minutes",
                "Intervene when at least {n} frames started in the last 30 minutes and more "
                "than at 95 % of this person's earlier moments.",
            ),
        ),
    }
)


def _shown(value: float) -> str:
    return f"{value:g}"


def numbers_for(scope: str, chosen: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Each service of ``scope`` with its number: the project's (``chosen``) where it set one,
    else the default; the rule as a sentence with the number in it."""
    chosen = chosen or {}
    found = []
    for spec in NUMBERS[scope]:
        value = chosen.get(spec.service)
        number = float(value) if isinstance(value, int | float) else spec.default
        found.append(
            {
                "service": spec.service,
                "number": number,
                "unit": spec.unit,
                "sentence": spec.sentence.format(n=_shown(number)),
                "default": spec.default,
                "default_words": f"{_shown(spec.default)} {spec.unit}, the reference labeler's",
                "changed": number != spec.default,
                "minimum": spec.minimum,
                "maximum": spec.maximum,
            }
        )
    return found


def check_numbers(scope: str, given: Mapping[str, Any]) -> dict[str, float]:
    """``given`` as the numbers a project keeps (services of ``scope`` only, within bounds),
    or ValueError saying which is wrong."""
    specs = {spec.service: spec for spec in NUMBERS[scope]}
    kept: dict[str, float] = {}
    for service, value in given.items():
        spec = specs.get(service)
        if spec is None:
            raise ValueError(f"{service!r} is not a {scope} service ({', '.join(specs)})")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{service}: a number of {spec.unit}, not {value!r}")
        if not spec.minimum <= value <= spec.maximum:
            raise ValueError(
                f"{service}: {value:g} {spec.unit} is outside {spec.minimum:g}–{spec.maximum:g}"
            )
        kept[service] = float(value)
    return kept


def _covers_every_service() -> None:
    for scope, specs in NUMBERS.items():
        if tuple(s.service for s in specs) != service_ids(scope):
            raise RuntimeError(f"numbers for {scope} do not match its services")


_covers_every_service()
