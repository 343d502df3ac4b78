"""make bench-labels: a labeler against a committed study, and a scope without one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmark.labelers.registry import reference_labels
from perf import harness
from perf import labels as bench
from perf.real import DATA, real_streams
from tests.conftest import need_service


def test_a_study_is_scored_and_a_missing_one_said_with_null_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not DATA.is_dir():
        need_service("shared data (../shared/data)", False)
    monkeypatch.setattr(harness, "RESULTS", tmp_path / "results")  # not the project's folder
    [_, home_b] = real_streams("home")
    ours = reference_labels(home_b)
    flagged = sorted(k for k, v in ours.items() if v.positive)
    quiet = sorted(k for k, v in ours.items() if not v.positive)[:3]
    trio = {"annotators": ["ana", "ben", "cy"], "adjudicator": "adi"}
    rows: list[dict[str, Any]] = [
        # The annotators agree with the first flagged point, decline the second, and flag one
        # the labeler left alone.
        {"entity": home_b.entity, "point": flagged[0], "label": "intervene",
         "service": ours[flagged[0]].service, "provenance": trio},
        {"entity": home_b.entity, "point": flagged[1], "label": "abstain", "provenance": trio},
        {"entity": home_b.entity, "point": quiet[0], "label": "intervene",
         "service": "check_device", "provenance": trio},
        *({"entity": home_b.entity, "point": p, "label": "abstain", "provenance": trio}
          for p in quiet[1:]),
    ]  # fmt: skip
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "study.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert bench.main(["--studies", str(tmp_path), "--scopes", "home,code"]) == 0
    out = capsys.readouterr().out
    figures = json.loads(out.strip().splitlines()[-1])["scopes"]
    home = figures["home"]
    assert (home["points"], home["annotators"], home["labeler_version"]) == (5, 3, 2)
    assert home["labeler_precision_vs_annotators"] == 0.5
    assert home["labeler_recall_vs_annotators"] == 0.5
    assert home["raw_agreement"] == 0.6 and home["gwet_ac1"] is not None
    assert f"- {home_b.entity}/{flagged[1]}: labeler intervene" in out
    code = figures["code"]
    assert code["points"] == 0 and code["labeler_precision_vs_annotators"] is None
    assert code["labeler_positives_in_streams"]["v1"] > code["labeler_positives_in_streams"]["v2"]
    assert "No adjudicated annotator labels are committed for code" in out
    assert json.loads((tmp_path / "results" / "labels.json").read_text())["scopes"] == figures
