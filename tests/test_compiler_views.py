"""Views over a compiled window (activity frames §5): the ledger, communications, steps."""

from __future__ import annotations

import pytest

from compiler.capture import Capture, InputEvent, Snapshot
from compiler.document import Compiled, compile_day
from compiler.params import Params
from compiler.views import (
    NATIVE_SURFACES,
    UNTRUSTED,
    _surface_kind,
    communications,
    find_frame,
    ledger,
    steps,
)
from tests.compiler_days import BASE, DAY, TZ, Day

FIXED = "2026-03-03T00:00:00+00:00"
GMAIL = "https://mail.google.com/mail/u/0/#inbox"
SLACK = "https://app.slack.com/client/T1/C2"


def compile_(d: Day, **params: object) -> Compiled:
    return compile_day(d.capture, DAY, TZ, Params(**params), generated_at=FIXED)  # type: ignore[arg-type]


# --- The ledger -----------------------------------------------------------------------------


def ledger_day() -> Day:
    d = Day()
    d.run(0, 300, 30, "Code", window="b")  # ten rows
    d.snap(300, "Slack", window="#eng")  # a 10 s flicker, folded into Code
    d.run(310, 400, 30, "Code", window="a  x")  # spaces collapse to "a x"
    for second, title in ((400, "c"), (430, "d"), (460, "e")):
        d.snap(second, "Code", window=title)  # the last earns nothing: a silence follows
    d.run(1100, 1160, 30, "Code", window="b")  # a second session, 60 s
    d.snap(1160, "Term")
    d.snap(1190, "Term")  # 30 s, then a silence
    d.snap(2000, "Alpha")
    d.snap(2030, "Beta")  # 30 s for Alpha, nothing for Beta (the last row)
    return d


def test_the_ledger_gives_each_apps_minutes_sessions_longest_session_and_top_titles() -> None:
    assert ledger(compile_(ledger_day(), min_minutes=0)) == [
        {
            "app": "Code",
            "minutes": 8.5,
            "sessions": 2,
            "longest_session_min": 7.5,
            "top_windows": ["b", "a x", "c"],
        },
        # Equal minutes: by name.
        {
            "app": "Alpha",
            "minutes": 0.5,
            "sessions": 1,
            "longest_session_min": 0.5,
            "top_windows": [],
        },
        {
            "app": "Term",
            "minutes": 0.5,
            "sessions": 1,
            "longest_session_min": 0.5,
            "top_windows": [],
        },
        # Seen only inside Code's frame: its minutes count, it has no session of its own.
        {
            "app": "Slack",
            "minutes": 0.17,
            "sessions": 0,
            "longest_session_min": 0.0,
            "top_windows": [],
        },
        {
            "app": "Beta",
            "minutes": 0.0,
            "sessions": 1,
            "longest_session_min": 0.0,
            "top_windows": [],
        },
    ]


def test_the_ledger_counts_frames_under_the_floor() -> None:
    compiled = compile_(ledger_day(), min_minutes=5)
    assert [f["app"] for f in compiled.document["frames"]] == ["Code"]
    assert [a["app"] for a in ledger(compiled)] == ["Code", "Alpha", "Term", "Slack", "Beta"]


def test_an_interruption_adds_to_an_app_that_also_has_frames() -> None:
    d = Day()
    d.run(0, 100, 25, "Slack")  # 100 s
    d.run(100, 220, 30, "Code")
    d.snap(220, "Slack")  # 10 s, back to Code: an interruption
    d.run(230, 350, 30, "Code")
    [slack] = [a for a in ledger(compile_(d, min_minutes=0)) if a["app"] == "Slack"]
    assert (slack["minutes"], slack["sessions"], slack["longest_session_min"]) == (1.83, 1, 1.67)


# --- Communication surfaces -----------------------------------------------------------------


def test_native_apps_are_surfaces_by_name_whatever_their_case() -> None:
    assert _surface_kind("Microsoft Outlook", set()) == "email"
    assert _surface_kind("SLACK", set()) == "messaging"
    assert _surface_kind("zoom.us", set()) == "meeting"
    assert _surface_kind("Code", set()) is None
    assert NATIVE_SURFACES["thunderbird"] == "email" and NATIVE_SURFACES["element"] == "messaging"


@pytest.mark.parametrize(
    ("kind", "surface"),
    [
        ("gmail", "email"),
        ("outlook_mail", "email"),
        ("email", "email"),
        ("Email_thread", "email"),
        ("slack_channel", "messaging"),
        ("teams_chat", "messaging"),
        ("discord_channel", "messaging"),
        ("whatsapp_chat", "messaging"),
        ("telegram_chat", "messaging"),
        ("messenger_chat", "messaging"),
        ("google_chat_space", "messaging"),
        ("messaging", "messaging"),
        ("meeting", "meeting"),
        ("Meeting_room", "meeting"),
        ("github_pr", None),
        ("page", None),
        ("mail", None),  # a prefix of none of them
    ],
)
def test_a_browser_frame_is_a_surface_by_the_kind_of_its_pages(
    kind: str, surface: str | None
) -> None:
    assert _surface_kind("Firefox", {kind}) == surface


def test_a_frame_of_several_surface_pages_takes_the_first_kind_by_name() -> None:
    assert _surface_kind("Firefox", {"slack_channel", "gmail"}) == "email"
    assert _surface_kind("Firefox", {"meeting", "discord_channel"}) == "messaging"
    assert _surface_kind("Firefox", {"page", "meeting", "teams_chat"}) == "meeting"
    assert _surface_kind("Slack", {"gmail"}) == "messaging"  # a native app is what it is


def communications_day() -> Day:
    d = Day()
    d.run(0, 90, 30, "Slack", window="#eng")  # rows 1-3
    d.run(90, 180, 30, "Firefox", window="Inbox", url=GMAIL)  # rows 4-6
    d.run(180, 270, 30, "Firefox", window="PR", url="https://github.com/a/b/pull/1")
    d.run(270, 360, 30, "Firefox", window="C2", url=SLACK)  # rows 10-12
    d.run(360, 450, 30, "zoom.us", window="Standup")  # rows 13-15
    d.run(450, 540, 30, "Code")
    d.run(540, 600, 30, "Slack", window="#ops")  # rows 19-20
    d.snap(600, "Slack", window="#eng")  # row 21
    d.snap(630, "Code")
    return d


def test_communications_list_each_surface_with_its_minutes_titles_and_evidence() -> None:
    surfaces = communications(compile_(communications_day(), min_minutes=0))
    assert surfaces == [
        {
            "kind": "email",
            "app": "Firefox",
            "site": "mail.google.com",
            "minutes": 1.5,
            "titles_seen": ["Inbox"],
            "evidence": {"frames": ["f-4"], "rows": "4-6"},
            "untrusted": UNTRUSTED,
        },
        {
            "kind": "meeting",
            "app": "zoom.us",
            "site": None,
            "minutes": 1.5,
            "titles_seen": ["Standup"],
            "evidence": {"frames": ["f-13"], "rows": "13-15"},
            "untrusted": UNTRUSTED,
        },
        {
            "kind": "messaging",
            "app": "Firefox",
            "site": "app.slack.com",
            "minutes": 1.5,
            "titles_seen": ["C2"],
            "evidence": {"frames": ["f-10"], "rows": "10-12"},
            "untrusted": UNTRUSTED,
        },
        # Two Slack frames, one surface: minutes summed, titles most seen first.
        {
            "kind": "messaging",
            "app": "Slack",
            "site": None,
            "minutes": 3.0,
            "titles_seen": ["#eng", "#ops"],
            "evidence": {"frames": ["f-1", "f-19"], "rows": "1-3,19-21"},
            "untrusted": UNTRUSTED,
        },
    ]
    assert UNTRUSTED.startswith("Window titles are third-party text")


def test_one_apps_surfaces_are_listed_by_site_the_one_without_first() -> None:
    d = Day()
    d.run(0, 40, 20, "Slack", window="#eng")  # 40 s, no site
    d.run(40, 80, 20, "Slack", window="#ops", url="https://0chat.example/c")
    d.run(80, 120, 20, "Slack", window="#dev", url=SLACK)
    d.snap(120, "Code")
    surfaces = communications(compile_(d, min_minutes=0))
    assert [(s["site"], s["minutes"]) for s in surfaces] == [
        (None, 0.67),
        ("0chat.example", 0.67),
        ("app.slack.com", 0.67),
    ]


def test_communications_of_one_kind_leave_the_others_out() -> None:
    compiled = compile_(communications_day(), min_minutes=0)
    assert [(s["kind"], s["app"]) for s in communications(compiled, "meeting")] == [
        ("meeting", "zoom.us")
    ]
    assert [s["app"] for s in communications(compiled, "messaging")] == ["Firefox", "Slack"]
    assert communications(compiled, "fax") == []


# --- A frame's steps ------------------------------------------------------------------------


def test_a_frame_is_found_by_its_id() -> None:
    compiled = compile_(communications_day(), min_minutes=0)
    assert find_frame(compiled, "f-1") == 0
    assert find_frame(compiled, "f-4") == 1
    assert find_frame(compiled, "f-5") is None
    with pytest.raises(KeyError) as raised:
        steps(compiled, "f-5")
    assert raised.value.args == ("no frame 'f-5' in this window",)


def steps_day() -> Day:
    d = Day()
    d.inp(90, "key")  # id 1: at the instant of row 5, so before its focus step (id order)
    d.run(0, 90, 30, "Firefox", window="Inbox", url=GMAIL)  # ids 2-4
    d.snap(90, "Firefox", window="Draft", url=GMAIL)  # id 5
    d.snap(120, "Firefox", url=GMAIL)  # id 6: no title, the app is the target
    d.snap(150, "Firefox", window="Draft", url=GMAIL)  # id 7
    d.element(5, "AXButton", "Send", (0.0, 0.0, 0.5, 0.5))
    d.inp(5, "key", text="q")  # a key's text is one keystroke
    d.inp(6, "text", text="qa")
    d.inp(7, "text", text="")  # empty text: one keystroke
    d.inp(10, "clipboard", text="qa")
    d.inp(20, "app_switch")
    d.inp(21, "scroll")
    d.inp(22, "key")
    d.inp(50, "clipboard")
    d.inp(91, "click", x=10.0, y=10.0)
    d.inp(92, "click")
    d.inp(93, "click", element_name="Archive", element_role="AXLink")
    d.inp(94, "clipboard")
    return d


def at(hms: str) -> str:
    return f"2026-03-02T{hms}+01:00"


def focus(hms: str, target: str) -> dict[str, object]:
    return {"t": at(hms), "op": "focus", "target": target, "app": "Firefox"}


def clicked(hms: str, target: str | None, role: str | None, tier: str, ms: int) -> dict:
    return {
        "t": at(hms),
        "op": "click",
        "target": target,
        "role": role,
        "tier": tier,
        "distance_ms": ms,
    }


STEPS = [
    focus("08:00:00", "Inbox"),
    {"t": at("08:00:05"), "op": "type", "n": 4},
    {"t": at("08:00:10"), "op": "copy"},
    {"t": at("08:00:22"), "op": "type", "n": 1},
    {"t": at("08:00:50"), "op": "copy"},
    {"t": at("08:01:30"), "op": "type", "n": 1},
    focus("08:01:30", "Draft"),
    clicked("08:01:31", "Send", "AXButton", "exact", 1000),
    clicked("08:01:32", None, None, "unresolved", 2000),
    clicked("08:01:33", "Archive", "AXLink", "named", 3000),
    {"t": at("08:01:34"), "op": "copy"},
    focus("08:02:00", "Firefox"),
    focus("08:02:30", "Draft"),
]


def test_steps_interleave_focus_changes_and_inputs_in_time_order() -> None:
    compiled = compile_(steps_day(), min_minutes=0)
    assert steps(compiled, "f-2") == {
        "frame": "f-2",
        "task": "Firefox/mail.google.com",
        "steps": STEPS,
        "step_count": 13,
        "unresolved_clicks": 1,
        "truncated": False,
    }


def test_typed_and_copied_text_appear_on_opt_in_typing_repaired_copies_as_captured() -> None:
    compiled = compile_(steps_day(), min_minutes=0, include_text=True, layout="azerty")
    texts = [(s["op"], s.get("text")) for s in steps(compiled, "f-2")["steps"]]
    assert texts[1:6] == [
        ("type", "aaq"),
        ("copy", "qa"),
        ("type", None),
        ("copy", None),  # a copy whose text was not captured
        ("type", None),
    ]


def test_typing_merges_with_text_only_after_a_keystroke_without_any() -> None:
    d = Day()
    d.run(0, 60, 30, "Code")
    d.inp(1, "key")
    d.inp(2, "text", text="ab")
    compiled = compile_(d, min_minutes=0, include_text=True)
    assert steps(compiled, "f-1")["steps"] == [
        # A frame whose first row has no title opens on its app.
        {"t": at("08:00:00"), "op": "focus", "target": "Code", "app": "Code"},
        {"t": at("08:00:01"), "op": "type", "n": 3, "text": "ab"},
    ]


def test_steps_past_the_limit_are_cut_and_said_to_be() -> None:
    compiled = compile_(steps_day(), min_minutes=0)
    assert steps(compiled, "f-2", max_steps=13)["truncated"] is False
    cut = steps(compiled, "f-2", max_steps=12)
    assert (cut["steps"], cut["step_count"], cut["truncated"]) == (STEPS[:12], 13, True)
    assert len(steps(compiled, "f-2")["steps"]) == 13  # 250 by default


def test_a_native_frames_task_is_its_app() -> None:
    d = Day()
    d.run(0, 60, 30, "Code", window="main.py")
    result = steps(compile_(d, min_minutes=0), "f-1")
    assert result["task"] == "Code"
    assert result["steps"] == [
        {"t": at("08:00:00"), "op": "focus", "target": "main.py", "app": "Code"}
    ]
    assert (result["unresolved_clicks"], result["truncated"]) == (0, False)


def test_steps_are_cut_at_two_hundred_fifty_by_default() -> None:
    d = Day()
    d.run(0, 300, 30, "Code", window="main.py")
    for n in range(260):
        d.inp(1 + n / 2, "click", element_name=f"b{n}")
    result = steps(compile_(d, min_minutes=0), "f-1")
    assert (len(result["steps"]), result["step_count"], result["truncated"]) == (250, 261, True)


def test_an_operators_keyboard_map_repairs_the_typed_steps() -> None:
    d = Day()
    d.run(0, 60, 30, "Code", window="main.py")
    d.inp(1, "text", text="qb")
    compiled = compile_(
        d, min_minutes=0, include_text=True, layout="azerty", layout_map=(("b", "B"),)
    )
    assert steps(compiled, "f-1")["steps"][1]["text"] == "qB"


def test_a_row_and_an_input_may_share_an_id_and_an_instant() -> None:
    # Snapshots and inputs are separate tables in a capture: their ids may coincide.
    capture = Capture(
        snapshots=[Snapshot(1, BASE, "0", "Code", "main.py"), Snapshot(2, BASE + 30, "0", "Code")],
        inputs=[InputEvent(1, BASE, "key")],
    )
    compiled = compile_day(capture, DAY, TZ, Params(min_minutes=0), generated_at=FIXED)
    assert [s["op"] for s in steps(compiled, "f-1")["steps"]] == ["focus", "type", "focus"]
