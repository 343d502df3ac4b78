"""The action stream of a compiled window: what the workflow detectors and routine miner read.

Activity Frames §7.1 mines routines "at action granularity and at URL granularity". Both are
read here from compiled frames (never from raw rows again), so every action carries the frame
it happened in and the event ids that are its evidence:

- **action** granularity: a click on a canonical target (an element the accessibility tree
  named, exactly or within the tolerance ring of §4.3; zone and unresolved clicks name nothing
  a replay could find again), and typing into a named field (consecutive keys and texts into
  one field of one frame are one action; keys whose event names no element go to the element
  clicked before them, unless that is one nothing is typed into, such as a button or a link);
- **url** granularity: each change of URL template in a frame's rows is one ``navigate``.

A URL template is ``host/p0/p1/*``: the site, its first two path segments with identifiers
(numbers, dates, hashes, long opaque tokens) replaced by ``*``, and ``/*`` when the path goes
deeper.
Queries and fragments are dropped (they hold searches, ids and sometimes secrets).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compiler.capture import Snapshot
from compiler.document import Compiled
from compiler.entities.url import split_url

CANONICAL_TIERS = frozenset({"named", "exact", "tolerance"})
"""§4.3 click tiers that name an element; ``zone`` and ``unresolved`` do not."""

TYPED = frozenset({"key", "text"})
# Roles nothing is typed into: keys after a click on one are shortcuts (or go to whatever has
# the focus), so they are not credited to it as typing into a named field.
NOT_TYPED_INTO = frozenset(
    {
        "AXButton",
        "AXLink",
        "AXRadioButton",
        "AXCheckBox",
        "AXMenuItem",
        "AXMenuButton",
        "AXPopUpButton",
        "AXTab",
        "AXHeading",
        "AXImage",
        "AXStaticText",
        "button",
        "link",
        "radio",
        "checkbox",
        "menuitem",
        "tab",
        "heading",
        "img",
    }
)
GRANULARITIES = ("action", "url")

_IDENTIFIER = re.compile(
    r"""^(?:
        \d+                           # numbers: issue, order and row ids
      | \d{4}-\d{2}(?:-\d{2})?         # dates and months: a monthly report, a day's log
      | [0-9a-f]{7,}                  # hex: commit shas, object ids
      | [0-9a-f]{8}-[0-9a-f-]{27}     # uuids
      | (?=[A-Za-z0-9_-]{16,}$)(?=.*\d)[A-Za-z0-9_-]+  # long opaque tokens with a digit
    )$""",
    re.VERBOSE | re.IGNORECASE,
)


def one_line(text: str) -> str:
    """A name as one line: a newline in a target would split a script step or a label in two."""
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class Action:
    """One step of the action stream, with the frame and events it was read from."""

    t: float  # UTC epoch seconds of its first event
    day: str  # local ISO date
    op: str  # click | type | navigate
    target: str  # click: the element's name; type: the field's name; navigate: a URL template
    role: str | None  # accessibility role of the element or field, if known
    app: str
    url_template: str | None  # of the page it happened on (None for native apps)
    frame: str  # f-<first row id>
    evidence: tuple[int, ...]  # event ids (inputs; for navigate, the snapshot row)
    text: str | None = None  # typed text, only when the compile included text

    @property
    def key(self) -> tuple[str, str, str | None]:
        """What makes two actions the same step: the operation and what it acted on."""
        return (self.op, self.target, self.role)


def url_template(url: str | None) -> str | None:
    """``host/p0/p1/*`` of a web URL, or None for no URL or a non-web one."""
    # split_url takes only web URLs and address-bar text ("localhost:3000/x" included).
    split = split_url(url) if url else None
    if split is None:
        return None
    segments = list(split.segments)
    kept = ["*" if _IDENTIFIER.match(s) else s.casefold() for s in segments[:2]]
    template = "/".join([split.site, *kept])
    return template + "/*" if len(segments) > 2 else template


def actions(compiled: Compiled, granularity: str = "action") -> list[Action]:
    """The window's actions at one granularity, in time order (ties: event id)."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"granularity must be one of {', '.join(GRANULARITIES)}")
    out: list[Action] = []
    for index, frame in enumerate(compiled.frames):
        frame_id = f"f-{frame.rows[0].id}"
        if granularity == "url":
            out.extend(_navigations(compiled, frame_id, frame.app, frame.rows))
            continue
        # Keyed for lookup by an input's snapshot id (None when it has none).
        rows: dict[int | None, Snapshot] = {row.id: row for row in frame.rows}
        clicked: tuple[str, str | None] | None = None  # the last named click: target, role
        for item in compiled.inputs.get(index, ()):
            event = item.event
            # An input on an absorbed interruption's row has only its own URL to go by.
            row = rows.get(item.snapshot_id)
            template = url_template(row.url if row is not None else event.url)
            if event.type == "click":
                if item.tier not in CANONICAL_TIERS or not item.target:
                    # The click went somewhere nothing names: typing after it is unplaced.
                    clicked = None
                    continue
                clicked = (item.target, item.role)
                out.append(
                    Action(
                        event.t,
                        compiled.local(event.t)[:10],
                        "click",
                        item.target,
                        item.role,
                        frame.app,
                        template,
                        frame_id,
                        (event.id,),
                    )
                )
            elif event.type in TYPED:
                if event.element_name:
                    field, role = event.element_name, event.element_role
                elif clicked is not None and clicked[1] not in NOT_TYPED_INTO:
                    field, role = clicked
                else:
                    continue
                text = event.text if compiled.params.include_text and event.type == "text" else None
                previous = out[-1] if out else None
                if (
                    previous is not None
                    and previous.op == "type"
                    and previous.frame == frame_id
                    and previous.target == field
                ):
                    merged = Action(
                        previous.t,
                        previous.day,
                        "type",
                        field,
                        previous.role,
                        previous.app,
                        previous.url_template,
                        frame_id,
                        (*previous.evidence, event.id),
                        _joined(previous.text, text),
                    )
                    out[-1] = merged
                    continue
                out.append(
                    Action(
                        event.t,
                        compiled.local(event.t)[:10],
                        "type",
                        field,
                        role,
                        frame.app,
                        template,
                        frame_id,
                        (event.id,),
                        text,
                    )
                )
    out.sort(key=lambda a: (a.t, a.evidence[0]))
    return out


def history(days: Iterable[Compiled], granularity: str = "action") -> list[Action]:
    """The actions of several compiled windows (days), in time order."""
    out = [action for compiled in days for action in actions(compiled, granularity)]
    out.sort(key=lambda a: (a.t, a.evidence[0]))
    return out


def _joined(left: str | None, right: str | None) -> str | None:
    if left is None:
        return right
    return left + (right or "")


def _navigations(
    compiled: Compiled, frame_id: str, app: str, rows: Sequence[Snapshot]
) -> list[Action]:
    out: list[Action] = []
    last: str | None = None
    for row in rows:
        template = url_template(row.url)
        if template is None or template == last:
            continue
        last = template
        out.append(
            Action(
                row.t,
                compiled.local(row.t)[:10],
                "navigate",
                template,
                None,
                app,
                template,
                frame_id,
                (row.id,),
            )
        )
    return out
