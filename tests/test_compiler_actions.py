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


@pytest.mark.parametrize(
    ("url", "template"),
    [
        # Address-bar text of a local server: a host and port, not a scheme (§7.1 URL level).
        ("localhost:3000/x", "localhost/x"),
        ("localhost/admin/users/7", "localhost/admin/users/*"),
        ("http://localhost:3000/x/y", "localhost/x/y"),
        ("example.com:8080/a", "example.com/a"),
        ("chrome://settings/privacy", None),
        ("moz-extension://abc/popup.html", None),
        ("javascript:void(0)", None),
        ("notahost", None),
    ],
)
def test_url_template_reads_address_bar_hosts_with_ports_and_refuses_other_schemes(url, template):
    assert url_template(url) == template


def test_navigations_carry_their_row_time_day_app_and_template_and_skip_repeats_and_native_rows():
    day = Day()
    day.snap(0, "Firefox", "Orders", "https://shop.example/orders/1")
    day.snap(5, "Firefox", "Orders", "https://shop.example/orders/2")  # same template: no step
    day.snap(10, "Firefox", "Settings", "about:preferences")  # no template: skipped
    day.snap(15, "Firefox", "Invoices", "https://shop.example/invoices")
    found = actions(_compiled(day), "url")
    assert [(a.target, a.evidence) for a in found] == [
        ("shop.example/orders/*", (1,)),
        ("shop.example/invoices", (4,)),
    ]
    last = found[-1]
    assert last.t == day.capture.snapshots[3].t
    assert last.day == DAY.isoformat()
    assert (last.app, last.url_template, last.role, last.frame) == (
        "Firefox",
        "shop.example/invoices",
        None,
        "f-1",
    )


def test_history_reads_each_window_at_the_granularity_asked():
    found = history([_compiled(_form_day())], "url")
    assert {a.op for a in found} == {"navigate"}
    assert len(found) == 4


def test_typing_merges_its_texts_and_keeps_the_app_and_page_of_its_first_event():
    day = Day()
    day.snap(0, "Firefox", "Orders", "https://shop.example/orders/1")
    day.inp(1, "click", element_name="Save", element_role="AXButton")
    day.inp(2, "text", element_name="Customer", element_role="AXTextField", text="Ada")
    day.inp(2.5, "key", element_name="Customer", element_role="AXTextField")
    day.inp(3, "text", element_name="Customer", element_role="AXTextField", text=" Lovelace")
    day.inp(4, "key", element_name="Note", element_role="AXTextArea")
    day.inp(4.5, "key", element_name="Note", element_role="AXTextArea")
    found = actions(_compiled(day, include_text=True))
    assert [(a.op, a.target, a.evidence, a.text) for a in found] == [
        ("click", "Save", (2,), None),
        ("type", "Customer", (3, 4, 5), "Ada Lovelace"),  # a key adds no text
        ("type", "Note", (6, 7), None),  # the merge replaces the last action, not the second
    ]
    customer = found[1]
    assert (customer.app, customer.url_template, customer.role) == (
        "Firefox",
        "shop.example/orders/*",
        "AXTextField",
    )


def test_an_unnamed_click_or_unplaced_typing_skips_only_itself():
    day = Day()
    day.snap(0, "Notes", "Draft")
    day.inp(0.5, "key")  # no field and no click yet in the frame
    day.inp(1, "click", element_name="Title", element_role="AXTextField")
    day.inp(2, "click")  # unresolved: typing after it has no field
    day.inp(3, "key")
    day.inp(4, "click", element_name="Body", element_role="AXTextArea")
    day.inp(5, "key")
    found = actions(_compiled(day))
    assert [(a.op, a.target, a.role, a.evidence) for a in found] == [
        ("click", "Title", "AXTextField", (3,)),
        ("click", "Body", "AXTextArea", (6,)),
        ("type", "Body", "AXTextArea", (7,)),
    ]


def test_typing_named_by_the_capture_keeps_its_own_role_after_a_click_elsewhere():
    day = Day()
    day.snap(0, "Notes", "Draft")
    day.inp(1, "click", element_name="Title", element_role="AXTextField")
    day.inp(2, "key", element_name="Body", element_role="AXTextArea")
    found = actions(_compiled(day))
    assert [(a.target, a.role) for a in found] == [
        ("Title", "AXTextField"),
        ("Body", "AXTextArea"),
    ]


def test_a_click_during_an_absorbed_flicker_takes_its_page_from_its_own_event():
    day = Day()
    day.snap(0, "Firefox", "Orders", "https://shop.example/orders/1")
    day.snap(30, "Slack", "#eng")  # 10 s of Slack folds into the Firefox frame (§4.2)
    day.inp(
        32, "click", element_name="Reply", element_role="AXButton", url="https://chat.example/c"
    )
    day.snap(40, "Firefox", "Orders", "https://shop.example/orders/1")
    day.snap(70, "Firefox", "Orders", "https://shop.example/orders/1")
    compiled = _compiled(day)
    assert len(compiled.frames) == 1 and compiled.frames[0].interruptions
    [click] = actions(compiled)
    assert (click.target, click.app, click.url_template) == ("Reply", "Firefox", "chat.example/c")
