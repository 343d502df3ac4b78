"""Hand-built capture days for the compiler tests (each exercises named rules)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from compiler.capture import Absence, Capture, Element, InputEvent, Snapshot

TZ = "Europe/Berlin"
DAY = date(2026, 3, 2)
BASE = datetime(2026, 3, 2, 7, 0, tzinfo=UTC).timestamp()  # 08:00 local


class Day:
    """Builds a capture row by row with increasing ids; times are seconds after 08:00 local."""

    def __init__(self) -> None:
        self.capture = Capture(recorder="hand-built", reader="test")
        self.next_id = 1

    def _id(self) -> int:
        value = self.next_id
        self.next_id += 1
        return value

    def snap(
        self,
        s: float,
        app: str,
        window: str | None = None,
        url: str | None = None,
        monitor: str = "0",
    ) -> int:
        row = Snapshot(self._id(), BASE + s, monitor, app, window, url)
        self.capture.snapshots.append(row)
        return row.id

    def run(self, start: float, end: float, step: float, app: str, **kw: object) -> list[int]:
        ids = []
        t = start
        while t < end:
            ids.append(self.snap(t, app, **kw))  # type: ignore[arg-type]
            t += step
        return ids

    def inp(self, s: float, type: str, monitor: str = "0", **kw: object) -> int:
        event = InputEvent(self._id(), BASE + s, type, monitor, **kw)  # type: ignore[arg-type]
        self.capture.inputs.append(event)
        return event.id

    def element(
        self, snapshot_id: int, role: str, name: str, bounds: tuple[float, float, float, float]
    ) -> None:
        self.capture.elements.append(Element(snapshot_id, role, name, bounds))

    def absent(self, start: float, end: float, monitor: str | None = None) -> None:
        self.capture.absences.append(Absence(self._id(), BASE + start, BASE + end, "afk", monitor))


def full_day() -> Capture:
    """One day touching every rule; the golden document is compiled from it."""
    d = Day()
    d.run(0, 600, 30, "Code", window="records.py — aframes")
    d.inp(65, "key")
    d.inp(66, "text", text="bulk_create")
    d.snap(600, "Slack", window="#eng")  # flicker: 12 s then back
    d.run(612, 1200, 30, "Code", window="records.py — aframes")
    d.run(1200, 1800, 20, "Firefox", window="PR #12", url="https://github.com/acme/app/pull/12")
    sid = d.snap(1800, "Firefox", window="Gmail", url="https://mail.google.com/mail/u/0/#inbox")
    d.element(sid, "AXButton", "Compose", (0.0, 0.1, 0.1, 0.05))
    d.element(sid, "AXGroup", "Toolbar", (0.0, 0.0, 1.0, 0.2))
    d.inp(1801, "click", x=50.0, y=130.0)  # exact: Compose
    d.inp(1802, "click", x=210.0, y=250.0)  # tolerance ring around the toolbar
    d.inp(1803, "click", x=1800.0, y=1000.0)  # zone: bottom-right
    d.inp(1804, "click")  # unresolved: no coordinates
    d.inp(1805, "click", element_name="Send", element_role="AXButton")  # named by capture
    d.inp(1806, "clipboard", text="meeting notes")
    d.run(1830, 2100, 30, "Firefox", window="Gmail", url="https://mail.google.com/mail/u/0/#inbox")
    # 20-minute silence: a coverage gap and a session break.
    d.run(3300, 3600, 45, "Terminal", window="zsh")
    d.snap(3600, "loginwindow")  # lock screen: away, never credited
    d.snap(3700, "loginwindow")
    d.run(3800, 4100, 30, "Terminal", window="zsh")
    d.absent(4200, 4380)  # a 3-minute AFK interval from the source
    d.snap(4250, "Terminal", window="zsh")  # a row inside the absence
    d.run(4400, 4700, 60, "\u200eSlack", window="#eng")  # invisible mark removed
    d.snap(4705, "Finder")  # transit: a single row, 35 s (too long for a flicker)
    d.run(4740, 5000, 40, "Slack", window="#eng")
    # Second monitor: its own stream, a docs browser.
    d.run(
        100,
        1500,
        50,
        "Firefox",
        window="Django docs",
        url="https://docs.djangoproject.com/en/5.2/ref/models/querysets/",
        monitor="1",
    )
    d.inp(200, "key", monitor="1")
    d.inp(9000, "key")  # far from any snapshot: unattributed
    return d.capture
