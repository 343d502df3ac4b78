"""The reference labeler of each scope, and the labels of a whole stream."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from zoneinfo import ZoneInfo

from benchmark.labelers.base import Label, ScopeLabeler, label_stream
from benchmark.labelers.code import CodeLabeler, CodeLabelerV2
from benchmark.labelers.desktop import DesktopLabeler
from benchmark.labelers.home import HomeLabeler, HomeLabelerV2
from benchmark.labelers.sports import SportsLabeler
from benchmark.streams.records import SCOPES, Stream

# Every version of every scope's labeler. A version changes only where a validity study with
# blind annotators showed the one before wrong (each module docstring says what and why); the
# newest is the labels of record, and the older ones stay for comparison with earlier runs.
LABELERS: Mapping[str, Mapping[int, Callable[[ZoneInfo], ScopeLabeler]]] = MappingProxyType(
    {
        "home": {1: HomeLabeler, 2: HomeLabelerV2},
        "sports": {1: SportsLabeler},
        "code": {1: lambda zone: CodeLabeler(), 2: lambda zone: CodeLabelerV2()},
        "desktop": {1: DesktopLabeler},
    }
)


def reference_labeler(scope: str, zone: ZoneInfo, version: int | None = None) -> ScopeLabeler:
    """The scope's labeler: its newest version, or the newest at or below ``version`` (so
    ``version=1`` gives every scope's first labels)."""
    if scope not in LABELERS:
        raise ValueError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    known = sorted(LABELERS[scope])
    chosen = [v for v in known if version is None or v <= version]
    if not chosen:
        raise ValueError(f"{scope} has labeler versions {', '.join(map(str, known))}")
    return LABELERS[scope][chosen[-1]](zone)


def reference_labels(stream: Stream, version: int | None = None) -> dict[str, Label]:
    """Every point's label by the scope's reference labeler, fed causally (``base.py``)."""
    return label_stream(stream, reference_labeler(stream.scope, stream.zone, version))


def rule_text(scope: str) -> str:
    """The written rule of a scope's labeler (its module docstring), for reports and pages."""
    labeler = reference_labeler(scope, ZoneInfo("UTC"))
    module = sys.modules[type(labeler).__module__]
    return (module.__doc__ or "").strip()
