"""The cost instrument (Activity Frames §7.1-§7.4): what replaying a routine saves over an agent
re-deriving it from screenshots, and how much of the stream recurs at all.

- ``C_agent(k) = k · (w·h/750 + 350 + 180)``: the modelled cost of an agent re-deriving a
  k-step routine: per step one screenshot of the w×h screen (w·h/750 tokens) plus the paper's
  fixed 350 + 180 tokens.
- ``R_inject = C_agent / tokens(guarded plan)``, ``R_info = C_agent / tokens(minimal script)``,
  each as a distribution over routines: median, IQR, and the median by routine length.
- ``h_raw``, ``h_specific`` and the temporal hold-out from :mod:`compiler.routines`.
- The all-fleet ceiling ``h · (1 − 1/R_info)``: the share of re-derivation cost a fleet
  could save if every recurring step were replayed from the script. R is never multiplied by
  the context block's compression ratio: that ratio measures reading, not acting.

Tokens are counted by an injected function (the shell passes tiktoken ``cl100k_base``), so this
module stays pure.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compiler.actions import GRANULARITIES, Action
from compiler.replay import plan, script
from compiler.routines import holdout, mine, recurrence

SCREENS = {"1512x982": (1512, 982), "1280x800": (1280, 800), "1728x1117": (1728, 1117)}
"""The paper's default laptop screen and the two it is compared with (§7.1–§7.4)."""
DEFAULT_SCREEN = "1512x982"
PIXELS_PER_TOKEN = 750  # Activity Frames §7: an image costs w·h/750 tokens
STEP_TOKENS = 350 + 180  # Activity Frames §7: C_agent's fixed tokens per step


def c_agent(k: int, w: int = 1512, h: int = 982) -> float:
    """Modelled tokens for an agent to re-derive a k-step routine on a w×h screen (§7)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative number of steps, not {k!r}")
    for name, side in (("w", w), ("h", h)):
        if isinstance(side, bool) or not isinstance(side, int) or side <= 0:
            raise ValueError(f"screen {name} must be a positive number of pixels, not {side!r}")
    return k * (w * h / PIXELS_PER_TOKEN + STEP_TOKENS)


def distribution(values: Sequence[float]) -> dict[str, Any]:
    """``n``, median and interquartile range (inclusive quartiles); None where there is none."""
    data = sorted(values)
    if not data:
        return {"n": 0, "median": None, "q1": None, "q3": None, "iqr": None}
    if len(data) == 1:
        q1 = q3 = data[0]
    else:
        q1, _, q3 = statistics.quantiles(data, n=4, method="inclusive")
    return {
        "n": len(data),
        "median": _round(statistics.median(data)),
        "q1": _round(q1),
        "q3": _round(q3),
        "iqr": _round(q3 - q1),
    }


def _round(value: float) -> float:
    return round(value, 4)


def _tokens(count_tokens: Callable[[str], int], text: str, what: str) -> int:
    n = count_tokens(text)
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"count_tokens must return a positive integer for a {what}, not {n!r}")
    return n


def report(
    actions_by_granularity: Mapping[str, Sequence[Action]],
    *,
    count_tokens: Callable[[str], int],
    screen: str = DEFAULT_SCREEN,
    fit_days: int | None = None,
) -> dict[str, Any]:
    """R and h per granularity: each routine's C_agent, plan and script tokens, R_inject, R_info
    and guard coverage; their distributions; ``h_raw``, ``h_specific`` and the hold-out; and the
    ceiling ``h_specific · (1 − 1/median R_info)`` (``ceiling_holdout`` with the hold-out's h).
    The plan is counted as ``json.dumps(plan, sort_keys=True)``, the form it is compared in.

    ``fit_days``: the hold-out fits on that many first active days; None fits on the first half
    (at least one), and a stream with fewer than two active days has no hold-out (None).
    """
    if screen not in SCREENS:
        raise ValueError(f"screen {screen!r} must be one of {', '.join(SCREENS)}")
    if not callable(count_tokens):
        raise ValueError("count_tokens must be a function from text to a number of tokens")
    if not isinstance(actions_by_granularity, Mapping) or not actions_by_granularity:
        raise ValueError("actions_by_granularity must map action and/or url to actions")
    for granularity in actions_by_granularity:
        if granularity not in GRANULARITIES:
            raise ValueError(
                f"granularity {granularity!r} must be one of {', '.join(GRANULARITIES)}"
            )
    w, h = SCREENS[screen]
    out: dict[str, Any] = {"screen": screen, "granularities": {}}
    for granularity in GRANULARITIES:
        if granularity in actions_by_granularity:
            stream = actions_by_granularity[granularity]
            out["granularities"][granularity] = _one(
                stream, granularity, count_tokens, w, h, fit_days
            )
    return out


def _one(
    stream: Sequence[Action],
    granularity: str,
    count_tokens: Callable[[str], int],
    w: int,
    h: int,
    fit_days: int | None,
) -> dict[str, Any]:
    routines = mine(stream, granularity=granularity)
    rows = []
    for routine in routines:
        p = plan(routine)
        k = len(routine.steps)
        cost = c_agent(k, w, h)
        plan_tokens = _tokens(count_tokens, json.dumps(p, sort_keys=True), "plan")
        script_tokens = _tokens(count_tokens, script(routine), "script")
        rows.append(
            {
                "id": routine.id,
                "length": k,
                "count": routine.count,
                "c_agent": _round(cost),
                "plan_tokens": plan_tokens,
                "script_tokens": script_tokens,
                "r_inject": _round(cost / plan_tokens),
                "r_info": _round(cost / script_tokens),
                "guard_coverage": p["guard_coverage"],
            }
        )
    by_length: dict[str, dict[str, Any]] = {}
    for length in sorted({r["length"] for r in rows}):
        same = [r for r in rows if r["length"] == length]
        by_length[str(length)] = {
            "n": len(same),
            "r_inject_median": _round(statistics.median(r["r_inject"] for r in same)),
            "r_info_median": _round(statistics.median(r["r_info"] for r in same)),
        }
    figures = recurrence(stream, routines, granularity=granularity)
    days = sorted({a.day for a in stream})
    fit = fit_days if fit_days is not None else max(1, len(days) // 2)
    # Too few active days at this granularity (a person who never used a browser has no URL
    # days) is no hold-out for it, not a failed report.
    held = holdout(stream, fit_days=fit, granularity=granularity) if len(days) > fit else None
    r_info = distribution([r["r_info"] for r in rows])
    return {
        "days": len(days),
        "routines": rows,
        "r_inject": distribution([r["r_inject"] for r in rows]),
        "r_info": r_info,
        "by_length": by_length,
        "plan_tokens": distribution([r["plan_tokens"] for r in rows]),
        "script_tokens": distribution([r["script_tokens"] for r in rows]),
        "guard_coverage": distribution([r["guard_coverage"] for r in rows]),
        "h_raw": figures["h_raw"],
        "h_specific": figures["h_specific"],
        "recurrence": figures,
        "holdout": held,
        "ceiling": _ceiling(figures["h_specific"], r_info["median"]),
        "ceiling_holdout": _ceiling(held["h_holdout"], r_info["median"]) if held else None,
    }


def ceiling(h: float, r_info: float) -> float:
    """The all-fleet ceiling ``h · (1 − 1/R_info)`` (Activity Frames §7)."""
    if not (isinstance(h, int | float) and 0 <= h <= 1):
        raise ValueError(f"h must be a share between 0 and 1, not {h!r}")
    if not (isinstance(r_info, int | float) and math.isfinite(r_info) and r_info > 0):
        raise ValueError(f"R_info must be a positive ratio, not {r_info!r}")
    return _round(h * (1 - 1 / r_info))


def _ceiling(h: float, r_info: float | None) -> float | None:
    return None if r_info is None else ceiling(h, r_info)


def percent(value: float | None) -> str:
    """A share as the cost report, the dashboard and the benchmark print it ("—" when none)."""
    return "—" if value is None else f"{100 * value:.1f} %"


def ratio(value: float | None) -> str:
    """A cost ratio (R_inject, R_info) as printed: "31.9×", "—" when none."""
    return "—" if value is None else f"{value:,.1f}×"
