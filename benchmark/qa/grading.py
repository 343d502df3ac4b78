"""Grading a model's reply against the oracle (Activity Frames §6.2's tolerances).

Paper tolerances: minutes within 30 %, clock times within 45 minutes, app counts within ±2,
app names by case-insensitive substring (either way: "Chrome" names "Google Chrome", and
"the app was Google Chrome" names it too). A yes/no is the reply's first word; a reply that
starts otherwise is a no when it negates ("the user did not visit …") and a yes when it states
the visit or use ("the user visited …"), since small models restate the question; one that
declines ("I don't know", "cannot be determined", "no information") is no answer. The strict sweep
tightens the two tolerances the paper sweeps, minutes to 10 % and clock times to 15 minutes;
counts and names are graded the same in both. Every edge is inclusive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchmark.qa.questions import Question

EPSILON = 1e-9  # a reply of exactly 30 % off is within 30 %, whatever the float rounding


@dataclass(frozen=True, slots=True)
class Tolerances:
    minutes_share: float  # relative error allowed on minutes
    clock_minutes: float  # minutes allowed between two clock times
    count: int  # absolute difference allowed on an app count


PAPER = Tolerances(minutes_share=0.30, clock_minutes=45.0, count=2)
STRICT = Tolerances(minutes_share=0.10, clock_minutes=15.0, count=2)
MIN_NAME_CHARS = 3  # a reply shorter than this names no app ("a" is in every name)

# "1,234" is a thousand and more (groups of three after a comma); "1,5" a decimal comma.
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_NUMBER = re.compile(rf"{_THOUSANDS.pattern}(?![\d,])|-?\d+(?:[.,]\d+)?")
_CLOCK = re.compile(r"\b(\d{1,2})[:.h](\d{2})\s*([ap]\.?m\.?)?", re.IGNORECASE)
_WORD = re.compile(r"[a-z]+")


def first_number(reply: str) -> float | None:
    found = _NUMBER.search(reply)
    if not found:
        return None
    text = found.group()
    if _THOUSANDS.fullmatch(text):
        return float(text.replace(",", ""))
    return float(text.replace(",", "."))


def clock_minutes(reply: str) -> int | None:
    """Minutes after midnight of the first clock time in the reply (24-hour, or am/pm)."""
    found = _CLOCK.search(reply)
    if not found:
        return None
    hour, minute = int(found.group(1)), int(found.group(2))
    meridiem = (found.group(3) or "").lower().replace(".", "")
    if meridiem == "pm" and hour < 12:
        hour += 12
    elif meridiem == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return None
    return hour * 60 + minute


_NEGATION = re.compile(r"\b(?:no|not|never|none|neither)\b|n't\b")
_AFFIRMATION = re.compile(r"\b(?:visited|used|opened)\b")
# A reply that declines to answer is no answer, not a "no" (it would score every absent probe).
_ABSTENTION = re.compile(
    r"\b(?:(?:do|does|did)\s*n[o']t\s+know|not\s+sure|unknown|unclear|cannot\s+(?:tell|say|"
    r"determine|be\s+determined)|can't\s+(?:tell|say|determine)|unable\s+to|not\s+enough|"
    r"no\s+(?:information|data|way\s+to))\b"
)


def yes_no(reply: str) -> bool | None:
    said = reply.lower()
    words = _WORD.findall(said)
    if not words:
        return None
    if words[0] == "yes":
        return True
    if words[0] == "no" and not _ABSTENTION.search(said):
        return False
    if _ABSTENTION.search(said):
        return None
    if _NEGATION.search(said):
        return False
    if _AFFIRMATION.search(said):
        return True
    return None


def names(reply: str, app: str) -> bool:
    """Whether the reply names the app: case-insensitive substring, either way."""
    said, name = reply.strip().strip(".").lower(), app.lower()
    if not said:
        return False
    return name in said or (len(said) >= MIN_NAME_CHARS and said in name)


def _position(reply: str, app: str) -> int | None:
    at = reply.lower().find(app.lower())
    return at if at >= 0 else None


def grade(question: Question, reply: str, tolerances: Tolerances = PAPER) -> bool:
    """Whether the reply answers the question within the tolerances."""
    expected = question.expected
    if question.kind == "dominant_app":
        assert isinstance(expected, str)
        return names(reply, expected)
    if question.kind == "pairwise":
        assert isinstance(expected, str) and question.other is not None
        if not names(reply, expected):
            return False
        right, wrong = _position(reply, expected), _position(reply, question.other)
        # Naming both counts when the right one comes first ("Code, then Slack").
        return wrong is None or (right is not None and right < wrong)
    if question.kind == "dominant_minutes":
        assert isinstance(expected, float | int)
        said = first_number(reply)
        allowed = tolerances.minutes_share * float(expected)
        return said is not None and abs(said - float(expected)) <= allowed + EPSILON
    if question.kind == "app_count":
        assert isinstance(expected, int)
        said = first_number(reply)
        return said is not None and abs(said - expected) <= tolerances.count + EPSILON
    if question.kind == "first_activity":
        assert isinstance(expected, str)
        said_at, expected_at = clock_minutes(reply), clock_minutes(expected)
        assert expected_at is not None
        return said_at is not None and abs(said_at - expected_at) <= tolerances.clock_minutes
    if question.kind in ("visited_domain", "absent_domain", "absent_app"):
        return yes_no(reply) is expected
    raise ValueError(f"no grading rule for question kind {question.kind!r}")
