"""The action stream (Activity Frames §7.1): canonical clicks, typing into named fields, and
URL-template navigations, each with its frame and evidence."""

from __future__ import annotations

import pytest

from compiler.actions import Action, actions, history, url_template
from compiler.document import compile_day
from compiler.params import Params
from tests.compiler_days import DAY, TZ, Day


def _compiled(day: Day, **params: object):
    return compile_day(day.capture, DAY, TZ, Params(**params))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "template"),
    [
        ("https://github.com/acme/api/pull/12", "github.com/acme/api/*"),
        ("https://www.github.com/acme", "github.com/acme"),
        ("https://github.com/", "github.com"),
        ("https://shop.example/orders/48213", "shop.example/orders/*"),
        ("https://x.example/a/b/c?q=secret#frag", "x.example/a/b/*"),
        ("https://x.example/A/B", "x.example/a/b"),
        ("https://x.example/3f2a9c1d7e/view", "x.example/*/view"),
        ("https://x.example/item/8d3f1a2b-1c2d-4e5f-9a8b-7c6d5e4f3a2b", "x.example/item/*"),
        ("https://x.example/s/AbCdEfGh12345678XY", "x.example/s/*"),
        ("https://x.example/reports/2026-03/new", "x.example/reports/*/*"),  # a month
        ("https://x.example/log/2026-03-02", "x.example/log/*"),  # a day
        ("https://x.example/2026-report/q1", "x.example/2026-report/q1"),  # a name, not a date
        ("https://x.example/docs/getting-started-guide", "x.example/docs/getting-started-guide"),
        ("example.org/path", "example.org/path"),
        ("file:///home/me/notes.txt", None),
        ("about:blank", None),
        ("", None),
        (None, None),
    ],
)
def test_url_template_keeps_the_site_and_two_segments_without_identifiers(url, template):
    assert url_template(url) == template


def _form_day() -> Day:
    day = Day()
    first = day.snap(0, "Firefox", "Orders", "https://shop.example/orders/1")
    day.inp(2, "click", element_name="New order", element_role="AXButton")
    day.inp(4, "key", element_name="Customer", element_role="AXTextField")
    day.inp(4.2, "key", element_name="Customer", element_role="AXTextField")
    day.inp(4.4, "text", element_name="Customer", element_role="AXTextField", text="Ada")
    day.inp(5, "key", element_name="Amount", element_role="AXTextField")
    day.snap(10, "Firefox", "Order 2", "https://shop.example/orders/2/edit")
    day.inp(11, "click", x=5.0, y=5.0)  # lands on nothing named: a zone click
    day.inp(12, "click")  # no position, no name: unresolved
    day.inp(13, "key")  # typing with no field and no click before it in the frame
    day.snap(20, "Firefox", "Orders", "https://shop.example/orders/3")
    day.snap(30, "Firefox", "Help", "https://help.example/faq")
    day.snap(40, "Firefox", "Help", "https://help.example/faq")
    assert first == 1
    return day


def test_action_granularity_reads_canonical_clicks_and_typing_into_named_fields():
    found = actions(_compiled(_form_day()))
    assert [(a.op, a.target, a.role) for a in found] == [
        ("click", "New order", "AXButton"),
        ("type", "Customer", "AXTextField"),
        ("type", "Amount", "AXTextField"),
    ]
    customer = found[1]
    assert customer.evidence == (3, 4, 5)  # three events into one field are one action
    assert customer.text is None  # text only when the compile includes it
    assert customer.url_template == "shop.example/orders/*"
    assert {a.frame for a in found} == {"f-1"}
    assert {a.day for a in found} == {DAY.isoformat()}
    assert found[0].key == ("click", "New order", "AXButton")


def test_typed_text_is_kept_only_when_the_compile_includes_text():
    found = actions(_compiled(_form_day(), include_text=True))
    assert found[1].text == "Ada"


def test_typing_without_a_field_name_goes_to_the_field_clicked_before_it():
    day = Day()
    day.snap(0, "Notes", "Draft")
    day.inp(1, "click", element_name="Title", element_role="AXTextField")
    day.inp(2, "key")
    day.inp(2.5, "key")
    found = actions(_compiled(day))
    assert [(a.op, a.target, a.role, a.evidence) for a in found] == [
        ("click", "Title", "AXTextField", (2,)),
        ("type", "Title", "AXTextField", (3, 4)),
    ]
    assert found[1].url_template is None  # a native app has no page


@pytest.mark.parametrize("role", ["AXButton", "AXLink", "AXRadioButton", "button"])
def test_keys_after_a_click_on_a_button_or_link_are_not_typing_into_it(role):
    day = Day()
    day.snap(0, "Expenses", "New expense")
    day.inp(1, "click", element_name="Save", element_role=role)
    day.inp(2, "key")  # a shortcut, or keys to whatever has the focus
    day.inp(3, "key", element_name="Amount", element_role="AXTextField")
    found = actions(_compiled(day))
    assert [(a.op, a.target) for a in found] == [("click", "Save"), ("type", "Amount")]


def test_keys_after_a_click_on_an_element_of_unknown_role_are_typing_into_it():
    day = Day()
    day.snap(0, "Notes", "Draft")
    day.inp(1, "click", element_name="Body")
    day.inp(2, "key")
    assert [(a.op, a.target) for a in actions(_compiled(day))] == [
        ("click", "Body"),
        ("type", "Body"),
    ]


def test_url_granularity_is_one_navigate_per_change_of_template():
    found = actions(_compiled(_form_day()), "url")
    assert [(a.op, a.target, a.evidence) for a in found] == [
        ("navigate", "shop.example/orders/*", (1,)),
        ("navigate", "shop.example/orders/*/*", (7,)),
        ("navigate", "shop.example/orders/*", (11,)),
        ("navigate", "help.example/faq", (12,)),
    ]
    # A site change starts a new frame; its navigations cite that frame.
    assert found[-1].frame == "f-12"


def test_history_orders_the_actions_of_several_windows_by_time():
    early, late = _form_day(), _form_day()
    one = _compiled(early)
    found = history([_compiled(late), one])
    assert len(found) == 6
    assert [a.t for a in found] == sorted(a.t for a in found)
    assert all(isinstance(a, Action) for a in found)


def test_an_unknown_granularity_is_refused():
    with pytest.raises(ValueError, match="granularity must be one of action, url"):
        actions(_compiled(_form_day()), "screen")
