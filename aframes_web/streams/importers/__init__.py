"""File formats ``manage.py import_events`` reads. One parser per format in the whole project.

A reader turns a file into :class:`SourceItem` s: an event item (a dict in our record shape) or
a line it could not read, each with its location for error reports. Readers stream: memory use
does not grow with the file. Formats whose files hold several entities (one per Fitbit Id, one
per repository, ...) name the sub-entity of each item; the importer routes items to
``<--entity>:<sub>``.
"""

from __future__ import annotations

from aframes_web.streams.importers import casas, desktop, fitbit, github, heartsteps, jsonl, ordonez
from aframes_web.streams.importers.base import (
    BLOCK,
    UNPACKED_FLOOR,
    FileTooStrange,
    Format,
    Reader,
    ReaderFactory,
    ReadLimits,
    SourceItem,
    bounded_lines,
    numbered_lines,
)

__all__ = [
    "BLOCK",
    "FileTooStrange",
    "Format",
    "ReadLimits",
    "Reader",
    "ReaderFactory",
    "SourceItem",
    "UNPACKED_FLOOR",
    "bounded_lines",
    "formats",
    "numbered_lines",
]


def formats() -> dict[str, Format]:
    registry = [
        jsonl.FORMAT,
        desktop.SCREENPIPE,
        desktop.ACTIVITYWATCH,
        casas.FORMAT,
        ordonez.FORMAT,
        heartsteps.FORMAT,
        fitbit.FORMAT,
        github.FORMAT,
    ]
    return {spec.name: spec for spec in registry}
