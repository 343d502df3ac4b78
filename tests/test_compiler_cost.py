"""The cost instrument (Activity Frames §7): C_agent, R_inject / R_info distributions, h_raw,
h_specific, the hold-out and the all-fleet ceiling, with an injected token counter."""

from __future__ import annotations

import json
import re
import statistics

import pytest

from compiler.cost import SCREENS, c_agent, ceiling, distribution, report
from compiler.replay import plan, script
from compiler.routines import holdout, mine, recurrence
from compiler.tokens import cl100k
from tests.test_compiler_routines import Stream


def words(text: str) -> int:
    return len(text.split())


def test_c_agent_is_a_screenshot_and_fixed_tokens_per_step():
    assert c_agent(1) == pytest.approx(1512 * 982 / 750 + 350 + 180)
    assert c_agent(3, 1280, 800) == pytest.approx(3 * (1280 * 800 / 750 + 530))
    assert c_agent(0) == 0
    assert SCREENS["1728x1117"] == (1728, 1117)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((-1,), "k must be a non-negative number of steps, not -1"),
        ((2.5,), "k must be a non-negative number of steps"),
        ((True,), "k must be a non-negative number of steps"),
        ((3, 0, 800), "screen w must be a positive number of pixels, not 0"),
        ((3, 1280, -5), "screen h must be a positive number of pixels, not -5"),
    ],
)
def test_c_agent_refuses_bad_sizes(args, message):
    with pytest.raises(ValueError, match=message):
        c_agent(*args)


def test_a_distribution_has_its_median_and_interquartile_range():
    assert distribution([1, 2, 3, 4, 5]) == {"n": 5, "median": 3, "q1": 2, "q3": 4, "iqr": 2}
    assert distribution([7.0]) == {"n": 1, "median": 7.0, "q1": 7.0, "q3": 7.0, "iqr": 0.0}
    assert distribution([]) == {"n": 0, "median": None, "q1": None, "q3": None, "iqr": None}


def test_the_ceiling_discounts_the_script_cost():
    assert ceiling(0.1, 200.0) == pytest.approx(0.1 * (1 - 1 / 200))
    for h, r, message in [
        (1.5, 10.0, "h must be a share between 0 and 1"),
        (0.1, 0.0, "R_info must be a positive ratio"),
        (0.1, float("inf"), "R_info must be a positive ratio"),
    ]:
        with pytest.raises(ValueError, match=message):
            ceiling(h, r)


def _history() -> tuple[Stream, Stream]:
    clicks, pages = Stream(), Stream()
    for day in ("2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05"):
        clicks.day = pages.day = day
        for _ in range(2):
            clicks.session("Compose", "To", "Subject", "Send")
            clicks.session("Issues", "Label", "Assign")
            pages.nav("shop.example/orders", "shop.example/orders/*", "shop.example/invoices")
        clicks.session(f"Once {day}", f"Again {day}", f"Third {day}")
    return clicks, pages


def test_the_report_gives_r_and_h_per_granularity():
    clicks, pages = _history()
    out = report({"action": clicks.out, "url": pages.out}, count_tokens=words)
    assert out["screen"] == "1512x982"
    action = out["granularities"]["action"]
    routines = mine(clicks.out)
    assert [r["id"] for r in action["routines"]] == [r.id for r in routines]
    first, routine = action["routines"][0], routines[0]
    plan_tokens = words(json.dumps(plan(routine), sort_keys=True))
    script_tokens = words(script(routine))
    cost = c_agent(len(routine.steps))
    assert first["plan_tokens"] == plan_tokens
    assert first["script_tokens"] == script_tokens
    assert first["r_inject"] == pytest.approx(cost / plan_tokens, abs=1e-4)
    assert first["r_info"] == pytest.approx(cost / script_tokens, abs=1e-4)
    assert (first["length"], first["count"]) == (len(routine.steps), routine.count)
    r_info = [r["r_info"] for r in action["routines"]]
    assert action["r_info"]["median"] == pytest.approx(statistics.median(r_info), abs=1e-4)
    assert action["by_length"].keys() == {"3", "4"}
    assert action["by_length"]["4"]["n"] == 1
    # 4 days x (2 x 7 routine steps + 3 unique steps) = 68 steps, 56 of them in routines.
    assert action["recurrence"]["steps"] == 68
    assert action["h_specific"] == pytest.approx(56 / 68, abs=1e-6)
    assert action["h_raw"] == action["h_specific"]
    # The hold-out fits on the first two days and finds both routines again in the last two.
    assert action["holdout"]["fit_days"] == ["2026-03-02", "2026-03-03"]
    assert action["holdout"]["h_holdout"] == pytest.approx(28 / 34, abs=1e-6)
    assert action["ceiling"] == pytest.approx(
        action["h_specific"] * (1 - 1 / action["r_info"]["median"]), abs=1e-4
    )
    assert action["ceiling_holdout"] == pytest.approx(
        action["holdout"]["h_holdout"] * (1 - 1 / action["r_info"]["median"]), abs=1e-4
    )
    url = out["granularities"]["url"]
    assert [r["length"] for r in url["routines"]] == [3]
    assert url["h_specific"] == 1.0
    assert url["routines"][0]["guard_coverage"] == 1.0


def test_the_screen_and_the_fit_days_change_the_figures():
    clicks, _ = _history()
    small = report({"action": clicks.out}, count_tokens=words, screen="1280x800", fit_days=1)
    large = report({"action": clicks.out}, count_tokens=words, screen="1728x1117")
    assert (
        small["granularities"]["action"]["routines"][0]["c_agent"]
        < (large["granularities"]["action"]["routines"][0]["c_agent"])
    )
    assert small["granularities"]["action"]["holdout"]["fit_days"] == ["2026-03-02"]
    assert "url" not in small["granularities"]


def test_a_granularity_with_no_day_beyond_the_fit_has_no_holdout_and_the_rest_stands():
    clicks, pages = _history()
    browsing = [a for a in pages.out if a.day <= "2026-03-03"]  # two days with a browser
    out = report({"action": clicks.out, "url": browsing}, count_tokens=words, fit_days=2)
    action, url = out["granularities"]["action"], out["granularities"]["url"]
    assert action["holdout"]["fit_days"] == ["2026-03-02", "2026-03-03"]
    assert action["ceiling_holdout"] is not None
    assert url["holdout"] is None and url["ceiling_holdout"] is None
    assert url["days"] == 2 and url["h_raw"] is not None  # the rest of the URL figures stand
    whole = report({"action": clicks.out}, count_tokens=words, fit_days=4)["granularities"]
    assert whole["action"]["holdout"] is None and whole["action"]["routines"]


def test_one_active_day_has_no_holdout_and_no_routines_have_no_ratios():
    s = Stream()
    s.session("Compose", "To", "Send")
    out = report({"action": s.out}, count_tokens=words)["granularities"]["action"]
    assert out["routines"] == [] and out["r_info"]["median"] is None
    assert out["holdout"] is None and out["ceiling"] is None and out["ceiling_holdout"] is None


def test_the_report_counts_with_cl100k():
    clicks, _ = _history()
    tokens = cl100k()
    out = report({"action": clicks.out}, count_tokens=tokens)["granularities"]["action"]
    routine = mine(clicks.out)[0]
    assert out["routines"][0]["script_tokens"] == tokens(script(routine))
    assert out["plan_tokens"]["median"] > out["script_tokens"]["median"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"screen": "800x600"}, "screen '800x600' must be one of 1512x982, 1280x800, 1728x1117"),
        ({"count_tokens": "cl100k"}, "count_tokens must be a function"),
        ({"count_tokens": lambda text: 0}, "count_tokens must return a positive integer"),
        ({"count_tokens": lambda text: 2.5}, "count_tokens must return a positive integer"),
        ({"actions": {}}, "must map action and/or url to actions"),
        ({"actions": {"screen": []}}, "granularity 'screen' must be one of action, url"),
    ],
)
def test_bad_report_inputs_are_refused(kwargs, message):
    clicks, _ = _history()
    kwargs = {"count_tokens": words, **kwargs}  # a copy: the parameters are shared across runs
    actions = kwargs.pop("actions", {"action": clicks.out})
    with pytest.raises(ValueError, match=message):
        report(actions, **kwargs)


def test_shares_and_ratios_are_printed_one_way_everywhere():
    from compiler.cost import percent, ratio

    assert percent(0.321552) == "32.2 %" and percent(0.0) == "0.0 %" and percent(None) == "—"
    assert ratio(456.3113) == "456.3×" and ratio(1234.56) == "1,234.6×" and ratio(None) == "—"


def _two_days() -> Stream:
    """Two days: a 5-step and two 3-step routines, a generic 3-gram that recurs but names nothing
    specific, and a routine step with neither a role nor a page (no element or URL guard)."""
    s = Stream()
    for day in ("2026-03-02", "2026-03-03"):
        s.day = day
        for _ in range(3):
            s.t += 600
            s.act("Compose")
            s.act("To", role=None, url=None)
            s.act("Send")
            s.session("Next", "OK", "Close")
            s.session("Search", "Filter", "Export")
            if day == "2026-03-02":  # only on the first day: the hold-out cannot know it
                s.session("Issues", "Label", "Assign", "Milestone", "Archive")
    return s


def test_each_figure_of_a_granularity_is_read_from_its_own_routines():
    s = _two_days()
    out = report({"action": s.out}, count_tokens=len, screen="1280x800")
    action = out["granularities"]["action"]
    routines = mine(s.out)
    rows = []
    for routine in routines:
        p, k = plan(routine), len(routine.steps)
        plan_tokens, script_tokens = len(json.dumps(p, sort_keys=True)), len(script(routine))
        rows.append(
            {
                "id": routine.id,
                "length": k,
                "count": routine.count,
                "c_agent": round(c_agent(k, 1280, 800), 4),
                "plan_tokens": plan_tokens,
                "script_tokens": script_tokens,
                "r_inject": round(c_agent(k, 1280, 800) / plan_tokens, 4),
                "r_info": round(c_agent(k, 1280, 800) / script_tokens, 4),
                "guard_coverage": p["guard_coverage"],
            }
        )
    assert [(r["length"], r["count"], r["guard_coverage"]) for r in rows] == [
        (3, 6, 1.0),
        (3, 6, 0.6667),
        (5, 3, 1.0),
    ]
    assert action["routines"] == rows

    def of(field: str, length: int | None = None) -> list[float]:
        return [r[field] for r in rows if length is None or r["length"] == length]

    assert action["by_length"] == {
        str(n): {
            "n": len(of("r_info", n)),
            "r_inject_median": round(statistics.median(of("r_inject", n)), 4),
            "r_info_median": round(statistics.median(of("r_info", n)), 4),
        }
        for n in (3, 5)
    }
    assert action["by_length"]["3"]["n"] == 2
    for field in ("r_inject", "r_info", "plan_tokens", "script_tokens", "guard_coverage"):
        assert action[field] == distribution(of(field)), field
    assert action["days"] == 2
    figures = recurrence(s.out, routines, granularity="action")
    assert action["recurrence"] == figures
    # The generic "Next → OK → Close" recurs (h_raw) but is no routine (h_specific).
    assert (action["h_raw"], action["h_specific"]) == (1.0, round(51 / 69, 6))
    assert (figures["steps"], figures["specific_steps"]) == (69, 51)
    # Two active days: the hold-out fits on the first and tests on the second.
    held = holdout(s.out, fit_days=1, granularity="action")
    assert action["holdout"] == held
    assert held["fit_days"] == ["2026-03-02"] and held["h_holdout"] == round(18 / 27, 6)
    median = action["r_info"]["median"]
    assert action["ceiling"] == ceiling(action["h_specific"], median)
    assert action["ceiling_holdout"] == ceiling(held["h_holdout"], median)
    assert action["ceiling"] != action["ceiling_holdout"]


def test_the_smallest_screen_and_token_counts_are_accepted():
    assert c_agent(1, 1, 1) == pytest.approx(1 / 750 + 530)
    out = report({"action": _two_days().out}, count_tokens=lambda text: 1)
    first = out["granularities"]["action"]["routines"][0]
    assert (first["plan_tokens"], first["script_tokens"]) == (1, 1)
    assert first["r_info"] == first["c_agent"] == round(c_agent(3), 4)


def test_a_distribution_of_two_values_interpolates_its_quartiles_and_rounds_to_four_places():
    assert distribution([3, 1]) == {"n": 2, "median": 2, "q1": 1.5, "q3": 2.5, "iqr": 1.0}
    assert distribution([1 / 3]) == {
        "n": 1,
        "median": 0.3333,
        "q1": 0.3333,
        "q3": 0.3333,
        "iqr": 0.0,
    }


def test_the_ceiling_takes_every_share_from_zero_to_one():
    assert ceiling(0, 2.0) == 0.0
    assert ceiling(1, 2.0) == 0.5
    assert ceiling(1, 3) == 0.6667
    assert ceiling(0.5, 1.0) == 0.0


def test_actions_that_are_not_a_mapping_are_refused():
    with pytest.raises(ValueError, match="actions_by_granularity must map action and/or url"):
        report([("action", [])], count_tokens=words)  # type: ignore[arg-type]


def test_a_bad_token_count_says_whether_it_was_for_the_plan_or_the_script():
    clicks, _ = _history()
    with pytest.raises(ValueError, match="positive integer for a plan, not 0$"):
        report({"action": clicks.out}, count_tokens=lambda text: 0)
    # Only the script (plain lines, not JSON) is counted as nothing.
    with pytest.raises(ValueError, match="positive integer for a script, not -1$"):
        report(
            {"action": clicks.out},
            count_tokens=lambda text: 3 if text.startswith("{") else -1,
        )
    with pytest.raises(ValueError, match="positive integer for a plan, not True$"):
        report({"action": clicks.out}, count_tokens=lambda text: True)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((3, 2.5, 800), "screen w must be a positive number of pixels, not 2.5"),
        ((3, 1280, True), "screen h must be a positive number of pixels, not True"),
        ((3, 1280, "800"), "screen h must be a positive number of pixels, not '800'"),
        (("3",), "k must be a non-negative number of steps, not '3'"),
    ],
)
def test_c_agent_refuses_sizes_that_are_not_integers(args, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        c_agent(*args)


def test_the_plan_is_counted_in_its_sorted_json_form():
    clicks, _ = _history()
    # Sorted, the plan's JSON opens with its "granularity" key (at index 1); the script has none.
    out = report({"action": clicks.out}, count_tokens=lambda text: text.find('"granularity"') + 2)[
        "granularities"
    ]["action"]
    assert {(r["plan_tokens"], r["script_tokens"]) for r in out["routines"]} == {(3, 1)}


@pytest.mark.parametrize(
    ("actions", "count_tokens", "message"),
    [
        ({}, words, "actions_by_granularity must map action and/or url to actions"),
        ({"action": []}, 3, "count_tokens must be a function from text to a number of tokens"),
    ],
)
def test_bad_report_inputs_say_exactly_what_was_expected(actions, count_tokens, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        report(actions, count_tokens=count_tokens)
