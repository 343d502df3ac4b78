"""Reference labels as files: the JSONL a run can score against instead of the labelers'.

One JSON object per line, one line per labelled decision point::

    {"entity": "ordonez-a", "point": "home:2011-11-28/12", "at": "2011-11-28T10:50:00+01:00",
     "label": "intervene", "service": "check_in_routine", "episode": "2011-11-28/Breakfast",
     "provenance": {"annotators": ["ana", "ben"], "adjudicator": "cy", "decided_at": "..."}}

``label`` is ``intervene`` or ``abstain``; ``service`` (a service id of the entity's scope),
``episode`` and ``valid_until`` (through when an intervention is still timely, ISO 8601 with an
offset; without it, only at the labelled point) are optional; ``provenance`` is kept as given
and shown with the label. Streams a file has no line for keep their reference labeler's labels,
and the run says which streams scored against which source.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from benchmark.labelers.base import Label
from benchmark.streams.catalogue import CATALOGUE

LabelKey = tuple[str, str]  # (entity key, point key)


class LabelFileError(ValueError):
    """A reference-label file that cannot be read; the message names the line and field."""


def read_labels(path: Path) -> dict[LabelKey, Label]:
    """The labels of a JSONL file, keyed by (entity, point); LabelFileError on a bad line."""
    if not path.is_file():
        raise LabelFileError(f"{path}: no such file")
    with path.open(encoding="utf-8") as handle:
        return parse_labels(handle, path.name, f"jsonl:{path.name}")


def parse_labels(lines: Iterable[str], name: str, source: str) -> dict[LabelKey, Label]:
    """The labels of JSONL ``lines`` (``name`` in messages, ``source`` on every label); a label's
    ``reason`` holds its provenance as JSON. LabelFileError on the first bad line."""
    services = {s.id for specs in CATALOGUE.values() for s in specs}
    found: dict[LabelKey, Label] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise LabelFileError(f"{where}: not JSON ({exc})") from None
        if not isinstance(row, dict):
            raise LabelFileError(f"{where}: a line must be a JSON object")
        entity, point, action = row.get("entity"), row.get("point"), row.get("label")
        if not isinstance(entity, str) or not entity:
            raise LabelFileError(f"{where}: entity must be an entity key")
        if not isinstance(point, str) or not point:
            raise LabelFileError(f"{where}: point must be a decision point key")
        if action not in ("intervene", "abstain"):
            raise LabelFileError(f"{where}: label must be intervene or abstain, not {action!r}")
        service = row.get("service")
        if service is not None and service not in services:
            raise LabelFileError(f"{where}: {service!r} is no service of the catalogue")
        if action == "intervene" and service is None:
            raise LabelFileError(f"{where}: an intervene label names its service")
        if (entity, point) in found:
            raise LabelFileError(f"{where}: {entity} {point} is labelled twice")
        provenance = row.get("provenance")
        until = row.get("valid_until")
        try:
            valid_until = datetime.fromisoformat(until) if until is not None else None
        except (TypeError, ValueError):
            raise LabelFileError(f"{where}: valid_until must be an ISO 8601 time") from None
        if valid_until is not None and valid_until.utcoffset() is None:
            raise LabelFileError(f"{where}: valid_until needs a UTC offset")
        found[(entity, point)] = Label(
            point,
            action,
            service if action == "intervene" else None,
            row.get("episode") if isinstance(row.get("episode"), str) else None,
            None,
            json.dumps(provenance, sort_keys=True) if provenance is not None else "",
            source,
            valid_until if action == "intervene" else None,
        )
    return found


def for_entity(labels: Mapping[LabelKey, Label], entity: str) -> dict[str, Label]:
    return {point: label for (e, point), label in labels.items() if e == entity}
