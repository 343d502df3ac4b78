"""The screener of triage (ProactMem §4.2: LLM-assisted triage): which points of a stream
look like likely opportunities, so that streams rich in them are labelled first.

Its marks order the queues and are counted for owners and adjudicators; they are never shown
to an annotator and never become a label (every point is still labelled by people).
"""

from __future__ import annotations

from aframes_web.annotation.errors import WorkbenchError
from aframes_web.annotation.models import LabelProject, ProjectStream
from aframes_web.proactivestream.selectors import stream_of
from aframes_web.streams.names import said_of
from benchmark.labelers.registry import reference_labels
from benchmark.streams.catalogue import CATALOGUE
from benchmark.streams.words import describe
from memory import llm

PROMPT = """You screen decision points of a {scope} event stream for a labelling team.
A point is a likely opportunity when a service below could help now.
Services:
{services}

The point: {words}

Answer with one word: yes (a likely opportunity) or no."""


def screen_stream(project: LabelProject, stream: ProjectStream) -> dict[str, bool]:
    """Point key → likely opportunity, by the project's screener (rule or LLM)."""

    keys = set(stream.tasks.values_list("point__key", flat=True))
    if project.triage == "rule":
        labels = reference_labels(stream_of(stream.entity))
        return {key: label.positive for key, label in labels.items() if key in keys}
    return _llm_marks(project, stream, keys)


def _llm_marks(project: LabelProject, stream: ProjectStream, keys: set[str]) -> dict[str, bool]:
    services = "\n".join(f"- {s.id}: {s.opportunity}" for s in CATALOGUE[project.scope])
    marks = {}
    spoken = said_of(stream.entity)
    for key, public in stream.tasks.values_list("point__key", "point__public"):
        words = describe(public, spoken)
        prompt = PROMPT.format(scope=project.scope, services=services, words=words)
        try:
            reply = llm.complete(prompt, entity=stream.entity)
        except llm.LlmUnavailable as exc:
            raise WorkbenchError(f"LLM triage failed at {key}: {exc}") from None
        marks[key] = reply.strip().lower().startswith("yes")
    return {k: v for k, v in marks.items() if k in keys}
