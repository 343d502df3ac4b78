"""A capture recorder for a Playwright page: what a person does there, as our event records.

It records the way a desktop recorder on macOS does (the records ``benchmark/synthetic/desktop.py``
writes and ``compiler.sources.jsonl`` reads): a snapshot row (app, window title, URL) when a page
loads and when a click happens (capture on input, as screenpipe does), and an input event for
each click, key and finished text entry, naming the element's accessibility role (as an AX role:
``AXButton``, ``AXTextField``, ...) and accessible name. The element is read in the page by a
script injected before any page script runs, and handed to Python through an exposed function.

Times are the real elapsed times of the recording, placed from a start the caller chooses, so a
routine recorded three times in a few seconds can stand for three mornings' work.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

APP = "Chromium"
MONITOR = "0"
# The AX role a macOS recorder reports for the ARIA role Chromium gives a control (the inverse
# of aframes_web.activity.replay_run.AX_TO_ARIA for the controls this page uses).
AX_ROLE = {
    "button": "AXButton",
    "link": "AXLink",
    "textbox": "AXTextField",
    "searchbox": "AXSearchField",
    "checkbox": "AXCheckBox",
    "radio": "AXRadioButton",
    "combobox": "AXPopUpButton",
    "menuitem": "AXMenuItem",
    "tab": "AXTab",
}

# Accessible role and name as the accessibility tree gives them for the usual HTML controls:
# an explicit role, else the tag's implicit role; aria-label, else aria-labelledby, else the
# <label> of the control, else its value (input buttons) or its text.
SCRIPT = r"""
(() => {
  if (window.__aframesRecorder) return;
  window.__aframesRecorder = true;
  const send = (payload) =>
    window.__aframesRecord({...payload, url: location.href, window: document.title});
  const control = (node) => node instanceof Element
    ? node.closest('button, a[href], input, textarea, select, [role]') : null;
  const INPUT_ROLES = {checkbox: 'checkbox', radio: 'radio', submit: 'button',
                       button: 'button', reset: 'button', search: 'searchbox'};
  const roleOf = (el) => {
    if (!el) return null;
    if (el.getAttribute('role')) return el.getAttribute('role');
    const tag = el.tagName.toLowerCase();
    if (tag === 'input') return INPUT_ROLES[(el.type || 'text').toLowerCase()] || 'textbox';
    return {button: 'button', a: 'link', textarea: 'textbox', select: 'combobox'}[tag] || null;
  };
  const nameOf = (el) => {
    if (!el) return null;
    const label = el.getAttribute('aria-label');
    if (label) return label.trim();
    const by = el.getAttribute('aria-labelledby');
    if (by) return by.split(/\s+/)
      .map((id) => (document.getElementById(id) || {}).textContent || '').join(' ').trim();
    if (el.labels && el.labels.length) return el.labels[0].textContent.trim();
    if (el.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type)) return el.value;
    return (el.textContent || '').replace(/\s+/g, ' ').trim() || null;
  };
  const element = (node) => {
    const el = control(node);
    return {name: nameOf(el), role: roleOf(el)};
  };
  document.addEventListener('DOMContentLoaded', () => send({kind: 'snapshot'}));
  document.addEventListener('click', (e) => send(
    {kind: 'input', type: 'click', x: e.screenX, y: e.screenY, ...element(e.target)}), true);
  document.addEventListener('keydown', (e) => send(
    {kind: 'input', type: 'key', ...element(e.target)}), true);
  document.addEventListener('change', (e) => {
    if ('value' in e.target) send({kind: 'input', type: 'text', text: e.target.value,
                                   ...element(e.target)});
  }, true);
})();
"""


class Recorder:
    """Records a page's snapshots and inputs as event records while a session is open."""

    def __init__(self, page: Any, prefix: str = "replay-test") -> None:
        self.records: list[dict[str, Any]] = []
        self.prefix = prefix
        self._start: datetime | None = None
        self._clock = 0.0
        self._counts: dict[str, int] = {}
        page.expose_function("__aframesRecord", self._seen)
        page.add_init_script(SCRIPT)

    @contextmanager
    def session(self, start: datetime) -> Iterator[None]:
        """Record from ``start`` (an aware datetime) on, by the real time elapsed."""
        self._start, self._clock = start, time.monotonic()
        try:
            yield
        finally:
            self._start = None

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in self.records))
        return path

    def _stamp(self, extra_us: int = 0) -> str:
        assert self._start is not None
        elapsed = timedelta(seconds=time.monotonic() - self._clock, microseconds=extra_us)
        return (self._start + elapsed).isoformat(timespec="microseconds")

    def _add(self, kind: str, stamp: str, payload: dict[str, Any]) -> None:
        count = self._counts[kind] = self._counts.get(kind, 0) + 1
        self.records.append(
            {
                "occurred_at": stamp,
                "kind": kind,
                "source_key": f"{self.prefix}:{MONITOR}:{kind}:{count:05d}",
                "monitor": MONITOR,
                "payload": payload,
            }
        )

    def _seen(self, event: dict[str, Any]) -> None:
        if self._start is None:
            return
        page = {"app": APP, "window": event["window"], "url": event["url"]}
        if event["kind"] == "snapshot" or event["type"] == "click":
            self._add("snapshot", self._stamp(), page)
        if event["kind"] == "snapshot":
            return
        payload: dict[str, Any] = {
            "type": event["type"],
            "x": event.get("x"),
            "y": event.get("y"),
            **page,
            "element_name": event.get("name"),
            "element_role": AX_ROLE.get(event.get("role") or "", event.get("role")),
        }
        if event["type"] == "text":
            payload["text"] = event["text"]
        # One microsecond after its capture-on-input snapshot, so the input is placed on it.
        self._add("input", self._stamp(1), payload)
