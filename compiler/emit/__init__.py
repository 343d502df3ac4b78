"""Emitters: canonical JSON, YAML (PyYAML optional), Markdown for people, the context block."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from compiler.document import Compiled
from compiler.params import MAX_CONTEXT_PAGES, TYPED_CHARS_NOTE_KEYS
from compiler.views import ledger

FORMATS = ("json", "yaml", "md", "context")
MAX_CONTEXT_FRAMES = 40  # §5: frames listed in a context block unless a token budget says otherwise


def approx_tokens(text: str) -> int:
    """A tokenizer-free stand-in (about four bytes a token) for callers without tiktoken."""
    return len(text.encode()) // 4 + 1


def to_json(document: dict[str, Any] | list[Any], *, indent: int | None = 2) -> str:
    """Sorted keys, UTF-8 text: the same document always gives the same bytes."""
    return json.dumps(document, sort_keys=True, indent=indent, ensure_ascii=False) + "\n"


def to_yaml(document: dict[str, Any]) -> str:
    try:  # stays: PyYAML is optional for the compiler alone
        import yaml  # type: ignore[import-untyped]  # optional; no stubs needed at run time
    except (
        ImportError
    ):  # pragma: no cover - PyYAML ships with Aframes; the compiler alone may lack it
        raise RuntimeError("YAML output needs PyYAML: pip install PyYAML") from None
    return str(yaml.safe_dump(document, sort_keys=True, allow_unicode=True, width=100))


def _at(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


def _hhmm(iso: str | None) -> str:
    return iso[11:16] if iso else "--:--"


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ") if text is not None else ""


def to_markdown(document: dict[str, Any]) -> str:
    cov = document["coverage"]
    window = document["window"]
    title = window.get("day") or f"{window['start']} – {window['end']}"
    lines = [
        f"# Activity {title} ({window['timezone']})",
        "",
        "Measured from capture; no interpretation.",
        "",
        "| first | last | active min | span min | coverage | rows | apps |",
        "|---|---|---|---|---|---|---|",
        f"| {_hhmm(cov['first_activity'])} | {_hhmm(cov['last_activity'])} | "
        f"{cov['active_minutes']} | {cov['span_minutes']} | {cov['coverage_pct']} % | "
        f"{cov['rows_analyzed']} | {cov['distinct_apps']} |",
        "",
    ]
    if cov["gaps"] or cov["away"]:
        lines += ["| from | to | minutes | what |", "|---|---|---|---|"]
        for gap in cov["gaps"]:
            lines.append(
                f"| {_hhmm(gap['start'])} | {_hhmm(gap['end'])} | {gap['minutes']} | no capture |"
            )
        for away in cov["away"]:
            lines.append(
                f"| {_hhmm(away['start'])} | {_hhmm(away['end'])} | {away['minutes']} | "
                f"away ({away['reason']}) |"
            )
        lines.append("")
    lines += [
        "| time | monitor | app | site | min | pages | keys | clicks | copies | id |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for frame in document["frames"]:
        pages = "; ".join(f"{p['kind']}:{p['entity']} ×{p['count']}" for p in frame["pages"][:3])
        flag = " (transit)" if frame["transit"] else ""
        lines.append(
            f"| {_hhmm(frame['start'])}–{_hhmm(frame['end'])} | {_md(frame['monitor'])} | "
            f"{_md(frame['app'])}{flag} | {_md(frame['site'])} | {frame['duration_min']} | "
            f"{_md(pages)} | {_counts(frame['input'])} | `{frame['id']}` |"
        )
    omitted = document["omitted"]
    if omitted["below_min_minutes"]:
        count = omitted["below_min_minutes"]
        lines += [
            "",
            f"{_frames(count)} under {omitted['min_minutes']} min ({omitted['minutes']} min) "
            f"{'is' if count == 1 else 'are'} omitted.",
        ]
    lines += ["", "## Blind spots", ""] + [f"- {s}" for s in document["blind_spots"]]
    return "\n".join(lines) + "\n"


def _counts(counts: dict[str, Any] | None) -> str:
    """A frame's keys, clicks and copies as table cells; unknown ones (no input recorded) as —."""
    if counts is None:
        return "— | — | —"
    return f"{counts['keys']} | {counts['clicks']} | {counts['copies']}"


def _page_ref(page: dict[str, Any], site: str | None) -> str:
    """``kind:entity xN``; an entity that only repeats the frame's site (the line already names
    it, as in ``Chrome/calendar.google.com``) is left out: ``calendar xN``."""
    entity = page["entity"]
    named = f"{page['kind']}:{entity}" if entity and entity != site else page["kind"]
    return f"{named} x{page['count']}"


def _frame_line(frame: dict[str, Any]) -> str:
    label = frame["app"] + (f"/{frame['site']}" if frame["site"] else "")
    refs = [_page_ref(p, frame["site"]) for p in frame["pages"][:MAX_CONTEXT_PAGES]]
    detail = "; ".join(refs) if refs else (frame["windows"][0] if frame["windows"] else "")
    if frame["input"] is not None and frame["input"]["keys"] > TYPED_CHARS_NOTE_KEYS:
        detail = (
            f"{detail}; typed ~{frame['input']['keys']} chars"
            if detail
            else f"typed ~{frame['input']['keys']} chars"
        )
    span = f"{_hhmm(frame['start'])}-{_hhmm(frame['end'])}"
    text = f"- {span} {label} ({round(frame['duration_min'])} m)"
    return f"{text}: {detail}" if detail else text


def _frames(count: int) -> str:
    return f"{count} frame" if count == 1 else f"{count} frames"


def _ledger_entry(app: dict[str, Any]) -> str:
    """``App 12m (3)``: minutes and sessions; an app seen only inside other apps' frames
    (a short switch folded in as an interruption) has no session of its own."""
    # round() takes half a minute to 0 (half to even): that is under a minute, not none.
    rounded = round(app["minutes"])
    shown = f"{rounded}m" if rounded else "<1m"
    sessions = f"({app['sessions']})" if app["sessions"] else "(within other frames)"
    return f"{app['app']} {shown} {sessions}"


def context_block(
    compiled: Compiled,
    *,
    budget_tokens: int | None = None,
    max_frames: int = MAX_CONTEXT_FRAMES,
    count_tokens: Callable[[str], int] = approx_tokens,
) -> str:
    """The compact block for system prompts; every active minute is accounted for.

    At most the ``max_frames`` longest frames are listed, in chronological order; of those,
    frames beyond the token budget are dropped longest-last. Frames left out are counted in
    the ``omitted`` line, each by what left it out; the per-app ledger line covers
    every credited minute, listed or not. Without a budget the block is held to the size of
    the header and the ``max_frames`` longest frame lines, the layout of the Activity Frames
    reference (REFERENCE.md), so the lines it adds cost no more than that.
    """
    doc = compiled.document
    cov = doc["coverage"]
    window = doc["window"]
    title = window.get("day") or f"{window['start'][:16]} to {window['end'][:16]}"
    head = [f"Activity {title} ({window['timezone']}): measured from capture, no interpretation."]
    if cov["first_activity"] is None:
        head.append("coverage: no activity captured in this window")
    else:
        summed = ""
        if cov["active_minutes"] > cov["span_minutes"]:
            # Each monitor is its own stream (activity frames §4.2): say so where the sum shows.
            summed = f" (summed over {len(cov['monitors'])} monitors: exceeds the span)"
        head.append(
            f"coverage: {_hhmm(cov['first_activity'])}-{_hhmm(cov['last_activity'])}, "
            f"{round(cov['active_minutes'])} active min{summed}, {cov['distinct_apps']} apps"
        )
    aways = cov["away"]
    for gap in cov["gaps"]:
        # A gap that an explicit away span covers is said once, as away time.
        if any(
            _at(a["start"]) <= _at(gap["start"]) and _at(gap["end"]) <= _at(a["end"]) for a in aways
        ):
            continue
        head.append(
            f"no capture: {_hhmm(gap['start'])}-{_hhmm(gap['end'])} ({round(gap['minutes'])}m)"
        )
    # One line per reason (afk, lock_screen), its spans in time order: each span costs a
    # prompt a third of what a line of its own would.
    spans: dict[str, list[str]] = {}
    for away in aways:
        if away["minutes"] < 1:
            continue  # still in the document; too short to be worth a prompt line
        spans.setdefault(away["reason"], []).append(
            f"{_hhmm(away['start'])}-{_hhmm(away['end'])} ({round(away['minutes'])}m)"
        )
    head.extend(f"away ({reason}): {', '.join(times)}" for reason, times in spans.items())
    apps = ledger(compiled)
    tail = []
    if apps:
        tail.append("ledger: " + ", ".join(_ledger_entry(a) for a in apps))
    frames = doc["frames"]
    lines = [_frame_line(f) for f in frames]
    ranked = sorted(range(len(frames)), key=lambda i: (-frames[i]["duration_min"], i))
    fixed = sum(count_tokens(line + "\n") for line in head + tail) + 30  # room for omitted lines
    listed = ranked[:max_frames]
    if budget_tokens is None and len(frames) > max_frames:
        # A day with more frames than can be listed costs what a block of the header, the
        # coverage line and the ``max_frames`` longest frames costs: the away spans and the
        # ledger, which account for every minute, are paid for by the shortest of those
        # frames, whose minutes the ledger still counts.
        budget_tokens = (
            sum(count_tokens(line + "\n") for line in head[:2])
            + sum(count_tokens(lines[i] + "\n") for i in listed)
            + 30
        )
        # Every frame left out, over the limit or not, makes room for those lines.
        beyond_limit = beyond_budget = f"the size of {max_frames} frames"
    else:
        # A caller's budget covers only the ``max_frames`` longest frames; the frames past
        # that limit were never weighed against it, so they are named as the limit's.
        beyond_limit, beyond_budget = f"the limit of {_frames(max_frames)}", "the token budget"
    keep: set[int] = set()
    used = fixed
    for i in listed:
        cost = count_tokens(lines[i] + "\n")
        if budget_tokens is not None and used + cost > budget_tokens:
            continue
        keep.add(i)
        used += cost
    body = [lines[i] for i in range(len(frames)) if i in keep]
    weighed = set(listed)
    # The budget's line first, then the limit's (one line when both are the same size).
    dropped: dict[str, list[dict[str, Any]]] = {beyond_budget: [], beyond_limit: []}
    for i, frame in enumerate(frames):
        if i not in keep:
            dropped[beyond_budget if i in weighed else beyond_limit].append(frame)
    omitted = doc["omitted"]
    left_out = []
    if omitted["below_min_minutes"]:
        left_out.append(
            f"{_frames(omitted['below_min_minutes'])} under {omitted['min_minutes']} min "
            f"({omitted['minutes']} m)"
        )
    for reason, frames_out in dropped.items():
        if not frames_out:
            continue
        minutes = round(sum(f["duration_min"] for f in frames_out), 1)
        left_out.append(f"{_frames(len(frames_out))} beyond {reason} ({minutes} m)")
    if left_out:
        tail.append("omitted: " + "; ".join(left_out))
    return "\n".join(head + body + tail) + "\n"


def render(compiled: Compiled, fmt: str, **options: Any) -> str:
    if fmt == "json":
        return to_json(compiled.document)
    if fmt == "yaml":
        return to_yaml(compiled.document)
    if fmt == "md":
        return to_markdown(compiled.document)
    if fmt == "context":
        return context_block(compiled, **options)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
