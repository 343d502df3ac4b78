"""make bench-labels: each reference labeler held against blind annotators' adjudicated labels.

    python -m perf.labels [--studies benchmark/studies] [--scopes home,sports,code]

The validity study of the labels (``benchmark/agreement.py``): per scope with real data (home:
Ordóñez A and B; sports: Fitabase's people; code: the kubernetes and ants repositories, read
from ``../shared/data`` with the importers' own readers, no database), the adjudicated labels
of at least three blind annotators in ``benchmark/studies/<scope>/*.jsonl`` (``labeling
export`` of a project ``labeling sample`` drew, committed with their provenance) are held
against the scope's reference labeler, newest version: raw agreement, Cohen's κ, Gwet's AC1,
the labeler's precision and recall against the annotators, and the disagreements in words.

A scope without a committed study says so and how to run one; its figures are null, never
made up. The last line is one JSON object: per scope ``annotators`` (the fewest behind any
point), ``points``, ``labeler_version``, ``labeler_precision_vs_annotators``,
``labeler_recall_vs_annotators``, ``raw_agreement``, ``cohen_kappa``, ``gwet_ac1``, and what a
study would sample now (``labeler_positives_in_streams``, each version's).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from benchmark.agreement import validity
from benchmark.labelers.base import Label
from benchmark.labelers.registry import LABELERS, reference_labels
from benchmark.reference import LabelFileError, read_labels
from perf.harness import ROOT, fail, finish
from perf.real import DATA, real_streams

STUDIES = ROOT / "benchmark" / "studies"
SCOPES = ("home", "sports", "code")  # the scopes with real data
TARGET = 0.6  # precision and recall of the labeler against the annotators
ANNOTATORS = 3  # independent labels per point, at least


def _study(folder: Path) -> dict[tuple[str, str], Label]:
    found: dict[tuple[str, str], Label] = {}
    for path in sorted(folder.glob("*.jsonl")):
        try:
            found.update(read_labels(path))
        except LabelFileError as exc:
            fail(str(exc))
    return found


def _scope(scope: str, folder: Path) -> dict[str, Any]:
    streams = real_streams(scope)
    newest = max(LABELERS[scope])
    ours: dict[str, Label] = {}
    positives: dict[str, int] = {}
    for version in sorted(LABELERS[scope]):
        count = 0
        for stream in streams:
            labels = reference_labels(stream, version)
            count += sum(v.positive for v in labels.values())
            if version == newest:
                ours.update({f"{stream.entity}/{k}": v for k, v in labels.items()})
        positives[f"v{version}"] = count
    study = {f"{e}/{p}": v for (e, p), v in _study(folder / scope).items()}
    figures = {
        "labeler_version": newest,
        "labeler_positives_in_streams": positives,
        "streams": len(streams),
    }
    found = validity(ours, study)
    missing = sorted(set(study) - set(ours))
    figures.update(found, study_files=len(list((folder / scope).glob("*.jsonl"))))
    print(f"\n== {scope}: labeler version {newest}, {len(streams)} real streams")
    print(
        "  labeler positives by version: "
        + ", ".join(f"{v} {n:,}" for v, n in positives.items())
        + " (a study samples these and as many abstains)"
    )
    if not study:
        print(
            f"  No adjudicated annotator labels are committed for {scope} "
            f"({folder / scope}/*.jsonl). Run the study: import the real files, `manage.py "
            f"labeling sample --team T --name '{scope} study' --scope {scope}` (every flagged "
            "point and as many random abstains), have at least three annotators who have seen "
            "neither the labeler nor any method label it blind in the workbench, adjudicate, "
            f"then `manage.py labeling export --team T --project ID --out {scope}.jsonl` and "
            "commit it here. Until then the figures below are null."
        )
        return figures
    if missing:
        print(f"  {len(missing):,} annotated points are not in the real streams: {missing[:3]}")
    show = lambda x: "n/a" if x is None else f"{x:.3f}"  # noqa: E731
    print(
        f"  {found['points']:,} points, at least {found['annotators']} annotators each "
        f"(target >= {ANNOTATORS}); raw agreement {show(found['raw_agreement'])}, Cohen's kappa "
        f"{show(found['cohen_kappa'])}, Gwet's AC1 {show(found['gwet_ac1'])}"
    )
    print(
        f"  the labeler flags {found['labeler_positives']}, the annotators "
        f"{found['annotator_positives']}, both {found['both_positive']}: precision "
        f"{show(found['labeler_precision_vs_annotators'])}, recall "
        f"{show(found['labeler_recall_vs_annotators'])} (targets >= {TARGET})"
    )
    for d in found["disagreements"]:
        print(
            f"  - {d['point']}: labeler {d['labeler']} ({d['labeler_reason'] or 'no reason'}); "
            f"annotators {d['annotators']} {d['annotators_service'] or ''}"
        )
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", type=Path, default=STUDIES)
    parser.add_argument("--scopes", default=",".join(SCOPES), help="comma-separated")
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.scopes.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SCOPES))
    if unknown:
        fail(f"no real data for {', '.join(unknown)}; choose among {', '.join(SCOPES)}")
    if not DATA.is_dir():
        fail(f"the shared data folder {DATA} is missing")
    print("Reference labelers against blind annotators (adjudicated labels), per scope:")
    scopes = {scope: _scope(scope, args.studies) for scope in chosen}
    summary = {
        scope: {
            key: f.get(key)
            for key in (
                "annotators",
                "points",
                "labeler_version",
                "labeler_precision_vs_annotators",
                "labeler_recall_vs_annotators",
                "raw_agreement",
                "cohen_kappa",
                "gwet_ac1",
                "labeler_positives_in_streams",
                "study_files",
            )
        }
        for scope, f in scopes.items()
    }
    finish("labels", {"scopes": summary, "studies_folder": str(args.studies)})
    return 0


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aframes_web.settings")
    raise SystemExit(main())
