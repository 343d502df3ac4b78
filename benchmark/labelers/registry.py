"""The reference labeler of each scope, and the labels of a whole stream."""

from __future__ import annotations

import sys
from zoneinfo import ZoneInfo

from benchmark.labelers.base import Label, ScopeLabeler, label_stream
from benchmark.labelers.code import CodeLabeler
from benchmark.labelers.desktop import DesktopLabeler
from benchmark.labelers.home import HomeLabeler
from benchmark.labelers.sports import SportsLabeler
from benchmark.streams.records import SCOPES, Stream


def reference_labeler(scope: str, zone: ZoneInfo) -> ScopeLabeler:
    if scope == "home":
        return HomeLabeler(zone)
    if scope == "sports":
        return SportsLabeler(zone)
    if scope == "code":
        return CodeLabeler()
    if scope == "desktop":
        return DesktopLabeler(zone)
    raise ValueError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")


def reference_labels(stream: Stream) -> dict[str, Label]:
    """Every point's label by the scope's reference labeler, fed causally (``base.py``)."""
    return label_stream(stream, reference_labeler(stream.scope, stream.zone))


def rule_text(scope: str) -> str:
    """The written rule of a scope's labeler (its module docstring), for reports and pages."""
    labeler = reference_labeler(scope, ZoneInfo("UTC"))
    module = sys.modules[type(labeler).__module__]
    return (module.__doc__ or "").strip()
