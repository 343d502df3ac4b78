"""One QA run over an entity's days (Activity Frames §6.2): the oracle, the compiler agreement
check, the token report and, with an answerer, every question on every representation.

Without an answerer the run still measures how far the compiled documents are from the
oracle (per day, |Δ| active minutes and the distinct-app counts) and what each representation
costs in tokens. With one, each (day, representation, question, trial) is graded with the
paper's tolerances and the strict sweep; a representation that does not fit the model's
context is infeasible for that day, which is counted apart from failures. Accuracies carry
Wilson 95 % score intervals, computed over the graded answers pooled across trials.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aframes_web.qa import oracle, representations
from aframes_web.qa.answerers import Answerer, fits, prompt
from aframes_web.streams.models import Entity
from benchmark.qa.grading import PAPER, STRICT, grade
from benchmark.qa.questions import CATEGORIES, day_questions, select_days, skipped_questions
from compiler.views import ledger
from memory import llm

DEFAULT_DAYS = 5
Progress = Callable[[str], None]


class QaConfigError(ValueError):
    """The run cannot start as asked (the message says why and what to do)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """One graded (or not gradable) answer."""

    question: str  # question id
    category: str
    representation: str
    trial: int
    status: str  # answered | infeasible | error
    reply: str
    correct: bool
    strict: bool


Z95 = 1.959963984540054  # the standard normal's 97.5th percentile


def wilson(correct: int, total: int) -> list[float] | None:
    """The Wilson score interval at 95 % (Wilson 1927), ``None`` for no answers.

    Written out rather than imported: the formula is three lines, and statsmodels (the test's
    independent implementation) would bring scipy and pandas into the runtime image for it.
    """
    if total == 0:
        return None
    p = correct / total
    centre = (p + Z95 * Z95 / (2 * total)) / (1 + Z95 * Z95 / total)
    half = Z95 * math.sqrt(p * (1 - p) / total + Z95 * Z95 / (4 * total * total))
    half /= 1 + Z95 * Z95 / total
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def _rate(outcomes: list[Outcome]) -> dict[str, Any]:
    graded = [o for o in outcomes if o.status != "infeasible"]
    n = len(graded)
    right = sum(o.correct for o in graded)
    strict = sum(o.strict for o in graded)
    return {
        "graded": n,
        "correct": right,
        "accuracy": round(right / n, 4) if n else None,
        "accuracy_ci95": wilson(right, n),
        "strict_correct": strict,
        "strict_accuracy": round(strict / n, 4) if n else None,
        "strict_accuracy_ci95": wilson(strict, n),
        "errors": sum(o.status == "error" for o in graded),
        "infeasible": sum(o.status == "infeasible" for o in outcomes),
    }


def _agreement(figures: oracle.DayFigures, result: Any) -> dict[str, Any]:
    document = result.compiled.document
    compiled_minutes = float(document["coverage"]["active_minutes"])
    apps = [entry["app"] for entry in ledger(result.compiled)]
    oracle_apps = set(figures.apps)
    # The compiler credits each monitor as its own stream; the oracle interleaves them. Per
    # monitor, the compiled minutes show how much of the difference is that rule alone.
    by_monitor: dict[str, float] = {}
    for frame in result.compiled.frames:
        seconds = frame.active_s + sum(b.active_s for b in frame.interruptions)
        by_monitor[frame.monitor] = by_monitor.get(frame.monitor, 0.0) + seconds
    union = oracle_apps | set(apps)
    return {
        "oracle_active_minutes": round(figures.active_minutes, 2),
        "compiled_active_minutes": round(compiled_minutes, 2),
        "delta_minutes": round(compiled_minutes - figures.active_minutes, 2),
        "compiled_minutes_by_monitor": {m: round(s / 60, 2) for m, s in sorted(by_monitor.items())},
        "oracle_apps": len(oracle_apps),
        "compiled_apps": len(apps),
        "apps_jaccard": round(len(oracle_apps & set(apps)) / len(union), 4) if union else None,
        "apps_only_oracle": sorted(oracle_apps - set(apps)),
        "apps_only_compiled": sorted(set(apps) - oracle_apps),
        "oracle_top_app": figures.ranked_apps[0] if figures.ranked_apps else None,
        "compiled_top_app": apps[0] if apps else None,
    }


def document_replies(questions: list[Any], result: Any, block_text: str) -> dict[str, str]:
    """What a perfect reader of the compiled day would reply to each question: the ledger's
    top app, minutes, count and order, the block's domains, the coverage's first activity.
    Graded like a model's replies, it is the ceiling the block sets for any answerer."""
    entries = ledger(result.compiled)
    minutes = {entry["app"]: entry["minutes"] for entry in entries}
    text = block_text.lower()
    replies: dict[str, str] = {}
    for question in questions:
        kind = question.kind
        if kind == "dominant_app":
            reply = entries[0]["app"] if entries else ""
        elif kind == "dominant_minutes":
            reply = str(minutes.get(str(question.subject), 0.0))
        elif kind == "app_count":
            reply = str(len(entries))
        elif kind == "pairwise":
            pair = (str(question.expected), str(question.other))
            reply = max(pair, key=lambda app: (minutes.get(app, 0.0), app == pair[1]))
        elif kind in ("visited_domain", "absent_domain"):
            reply = "yes" if str(question.subject).lower() in text else "no"
        elif kind == "absent_app":
            reply = "yes" if question.subject in minutes else "no"
        else:  # first_activity
            first = result.compiled.document["coverage"]["first_activity"]
            reply = first[11:16] if first else ""
        replies[question.id] = reply
    return replies


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def qa_run(
    *,
    entity: Entity,
    days: int = DEFAULT_DAYS,
    answerer: Answerer | None = None,
    repeats: int = 1,
    asked: tuple[str, ...] = representations.REPRESENTATIONS,
    progress: Progress = lambda line: None,
) -> dict[str, Any]:
    """The run's results as plain data (what ``qa.json`` holds).

    ``asked``: the representations the answerer is given (the summary is made only when it
    is among them); the token report always covers the raw rows and the block.
    """
    unknown = [name for name in asked if name not in representations.REPRESENTATIONS]
    if unknown or not asked:
        raise QaConfigError(
            f"--representations {','.join(asked)!r}: choose from "
            f"{', '.join(representations.REPRESENTATIONS)}"
        )
    if entity.scope != "desktop":
        raise QaConfigError(
            f"entity {entity.key!r} is a {entity.scope} stream; the QA harness asks about "
            "desktop days (snapshot rows)"
        )
    if days < 1:
        raise QaConfigError(f"--days must be at least 1, got {days}")
    if repeats < 1:
        raise QaConfigError(f"--repeats must be at least 1, got {repeats}")
    found = oracle.snapshot_days(entity)
    if not found:
        raise QaConfigError(f"entity {entity.key!r} has no snapshot rows; import capture first")
    progress(f"qa: {len(found)} days with snapshot rows; computing the oracle's figures")
    try:
        ever = {
            "apps_ever": frozenset(oracle.distinct_apps(entity)),
            "domains_ever": frozenset(oracle.distinct_domains(entity)),
        }
        chosen = select_days([oracle.day_figures(entity, day, **ever) for day, _ in found], days)
    except ValueError as problem:
        raise QaConfigError(str(problem)) from None
    names = [name for name in representations.REPRESENTATIONS if name in asked]
    per_day: list[dict[str, Any]] = []
    outcomes: list[Outcome] = []
    questions_out: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for number, figures in enumerate(chosen, 1):
        day = figures.day
        progress(f"qa: day {day} ({number}/{len(chosen)}): {figures.rows} rows")
        questions = day_questions(figures)
        questions_out.extend(q.as_dict() for q in questions)
        skipped += [
            {"day": day.isoformat(), "kind": kind, "why": why}
            for kind, why in skipped_questions(figures)
        ]
        result = representations.compiled(entity, day)
        shown = {
            "raw": representations.raw(entity, day),
            "block": representations.block(entity, day, result),
        }
        ceiling = document_replies(questions, result, shown["block"].text)
        feasible: dict[str, bool] = {}
        failed: dict[str, str] = {}  # representations the model failed to make
        if answerer is not None and "summary" in names:
            progress(f"qa: day {day}: summarising the raw rows with {answerer.model}")
            try:
                shown["summary"] = representations.summary(
                    entity, day, complete=answerer.complete, context_tokens=answerer.context_tokens
                )
            except ValueError as problem:  # not even one row fits: infeasible
                progress(f"qa: day {day}: no summary ({problem})")
            except llm.LlmUnavailable as problem:  # the model failed: every answer an error
                failed["summary"] = str(problem)
                progress(f"qa: day {day}: no summary ({problem})")
        for name in names if answerer is not None else []:
            rep = shown.get(name)
            feasible[name] = rep is not None and all(
                fits(str(day), rep, q.text, answerer.context_tokens) for q in questions
            )
            for trial in range(1, repeats + 1):
                for question in questions:
                    if name in failed:
                        outcomes.append(
                            Outcome(
                                question.id,
                                question.category,
                                name,
                                trial,
                                "error",
                                failed[name],
                                False,
                                False,
                            )  # fmt: skip
                        )
                        continue
                    outcomes.append(_ask(answerer, rep, question, trial, feasible[name], name))
            if rep is not None and feasible[name]:
                right = sum(o.correct for o in outcomes[-len(questions) * repeats :])
                progress(f"qa: day {day} {name}: {right}/{len(questions) * repeats} correct")
        per_day.append(
            {
                "day": day.isoformat(),
                "rows": figures.rows,
                "oracle": {
                    "active_minutes": round(figures.active_minutes, 2),
                    "apps": [
                        {"app": app, "minutes": round(seconds / 60, 2)}
                        for app, seconds in figures.app_seconds
                    ],
                    "domains": list(figures.domains),
                    "first_activity": figures.first_activity.isoformat(timespec="seconds")
                    if figures.first_activity
                    else None,
                    "last_activity": figures.last_activity.isoformat(timespec="seconds")
                    if figures.last_activity
                    else None,
                },
                "agreement": _agreement(figures, result),
                "document_answers": {
                    "correct": sum(grade(q, ceiling[q.id], PAPER) for q in questions),
                    "strict_correct": sum(grade(q, ceiling[q.id], STRICT) for q in questions),
                    "wrong": {
                        q.kind: ceiling[q.id] for q in questions if not grade(q, ceiling[q.id])
                    },
                },
                "tokens": {name: rep.tokens for name, rep in shown.items()},
                "sources": {name: rep.source for name, rep in shown.items()},
                "feasible": feasible if answerer is not None else None,
                "failed": failed,
            }
        )
    results = _results(entity, per_day, questions_out, outcomes, answerer, repeats)
    results["skipped_questions"] = skipped
    return results


def _ask(
    answerer: Answerer,
    rep: representations.Representation | None,
    question: Any,
    trial: int,
    feasible: bool,
    name: str,
) -> Outcome:
    if rep is None or not feasible:
        return Outcome(question.id, question.category, name, trial, "infeasible", "", False, False)
    try:
        reply = answerer.complete(prompt(question.day, rep, question.text, trial)).strip()
    except llm.LlmUnavailable as problem:
        return Outcome(
            question.id, question.category, name, trial, "error", str(problem), False, False
        )
    return Outcome(
        question.id,
        question.category,
        name,
        trial,
        "answered",
        reply,
        grade(question, reply, PAPER),
        grade(question, reply, STRICT),
    )


def _results(
    entity: Entity,
    per_day: list[dict[str, Any]],
    questions: list[dict[str, Any]],
    outcomes: list[Outcome],
    answerer: Answerer | None,
    repeats: int,
) -> dict[str, Any]:
    deltas = [abs(d["agreement"]["delta_minutes"]) for d in per_day]
    app_deltas = [
        abs(d["agreement"]["compiled_apps"] - d["agreement"]["oracle_apps"]) for d in per_day
    ]
    tokens: dict[str, Any] = {}
    for name in representations.REPRESENTATIONS:
        counts = [d["tokens"][name] for d in per_day if name in d["tokens"]]
        if counts:
            tokens[name] = {"median": _median(counts), "min": min(counts), "max": max(counts)}
    ratios = [d["tokens"]["raw"] / d["tokens"]["block"] for d in per_day if d["tokens"]["block"]]
    results: dict[str, Any] = {
        "entity": entity.key,
        "timezone": entity.timezone,
        "days": [d["day"] for d in per_day],
        "questions": len(questions),
        "tolerances": {
            "paper": {
                "minutes_share": PAPER.minutes_share,
                "clock_minutes": PAPER.clock_minutes,
                "app_count": PAPER.count,
            },
            "strict": {
                "minutes_share": STRICT.minutes_share,
                "clock_minutes": STRICT.clock_minutes,
                "app_count": STRICT.count,
            },
        },  # fmt: skip
        "oracle_dwell_cap_s": oracle.ORACLE_DWELL_CAP_S,
        "agreement": {
            "minutes_median_abs": _median(deltas),
            "minutes_max_abs": round(max(deltas), 2) if deltas else None,
            "apps_equal_days": sum(1 for a in app_deltas if a == 0),
            "apps_max_abs": max(app_deltas) if app_deltas else None,
            "top_app_equal_days": sum(
                1
                for d in per_day
                if d["agreement"]["oracle_top_app"] == d["agreement"]["compiled_top_app"]
            ),
        },
        "document_answers": {
            "correct": sum(d["document_answers"]["correct"] for d in per_day),
            "strict_correct": sum(d["document_answers"]["strict_correct"] for d in per_day),
            "questions": len(questions),
        },
        "tokens": tokens,
        "raw_to_block_ratio_median": _median(ratios),
        "per_day": per_day,
        "question_list": questions,
        "answerer": None,
    }
    if answerer is not None:
        by_rep: dict[str, Any] = {}
        for name in dict.fromkeys(o.representation for o in outcomes):
            mine = [o for o in outcomes if o.representation == name]
            by_rep[name] = {
                **_rate(mine),
                "infeasible_days": sum(
                    1 for d in per_day if not d["feasible"].get(name) and name not in d["failed"]
                ),
                "by_category": {c: _rate([o for o in mine if o.category == c]) for c in CATEGORIES},
            }
        results["answerer"] = {
            "name": answerer.name,
            "model": answerer.model,
            "context_tokens": answerer.context_tokens,
            "repeats": repeats,
            "representations": by_rep,
            "outcomes": [
                {
                    "question": o.question,
                    "representation": o.representation,
                    "trial": o.trial,
                    "status": o.status,
                    "reply": o.reply,
                    "correct": o.correct,
                    "strict": o.strict,
                }
                for o in outcomes
            ],
        }
    return results
