"""``make bench-cost`` run small: the readable report, then one JSON line with the figures."""

from __future__ import annotations

import json

import pytest

from perf import cost
from perf.cost import LAST_LINE_KEYS, main


def test_five_days_end_with_one_json_line_of_the_judged_figures(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("perf.harness.RESULTS", tmp_path)
    assert main(["--days", "5"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("SYNTHETIC history: 5 days")
    assert "pure path" in out[0]
    figures = json.loads(out[-1])
    assert list(figures)[: len(LAST_LINE_KEYS)] == list(LAST_LINE_KEYS)
    assert figures["days"] == 5 and figures["synthetic"] is True
    for key in ("mining_s", "plan_ms_median", "total_s"):
        assert figures[key] >= 0, key
    assert figures["plan_tokens_median"] > figures["script_tokens_median"] > 0
    # R_inject divides by the guarded plan, R_info by the shorter script (§7.1).
    assert figures["r_info_median"] > figures["r_inject_median"] > 1
    assert 0 <= figures["h_specific"] <= figures["h_raw"] <= 1
    assert json.loads((tmp_path / "cost.json").read_text()) == figures


def test_the_routines_of_the_synthetic_person_are_mined() -> None:
    result = cost.run(15)
    mined = [" → ".join(s.target for s in r.steps) for r in result["routines"]["action"]]
    assert any("Archive → Older → Archive" in m for m in mined), mined
    assert any(m.startswith("New expense → Amount → Merchant") for m in mined), mined


@pytest.mark.parametrize("days", ["0", "400"])
def test_days_out_of_range_are_refused(days, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--days", days])
    assert stop.value.code == 2
    assert "--days must be from 1 to 366" in capsys.readouterr().err
