"""Benchmark runs as plain JSON-ready records: the one shape the API (and MCP) show."""

from __future__ import annotations

from typing import Any

from aframes_web.proactivestream.models import BenchmarkRun
from aframes_web.streams.records import format_timestamp

_time = format_timestamp  # the API's one spelling of a moment


def run_summary(run: BenchmarkRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "kind": run.kind,
        "status": run.status,
        "scope": run.config.get("scope"),
        "methods": list(run.config.get("methods", [])),
        "labels": run.config.get("labels"),
        "control": bool(run.config.get("control", True)),
        "streams": len(run.config.get("entities", [])),
        "progress": {
            "done": run.progress_done,
            "total": run.progress_total,
            "percent": run.percent,
            "note": run.progress_note,
        },
        "created_at": _time(run.created_at),
        "started_at": _time(run.started_at),
        "finished_at": _time(run.finished_at),
        "error": run.error,
    }


def run_record(run: BenchmarkRun, files: list[str]) -> dict[str, Any]:
    return {
        **run_summary(run),
        "entities": list(run.config.get("entities", [])),
        "synthetic": list(run.config.get("synthetic", [])),
        "code_version": run.code_version,
        "results": run.results,
        "files": files,
    }
