"""The SYNTHETIC dense CASAS month the ProactiveStream bench replays for speed."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from aframes_web.streams.importers.casas import CasasReader
from benchmark.synthetic import casas_month

ZONE = ZoneInfo(casas_month.ZONE)


def _items(path: Path) -> list[dict]:
    read = list(CasasReader(path, ZONE))
    assert all(r.error is None for r in read), [r.error for r in read if r.error][:3]
    return [r.item for r in read if r.item is not None]


def test_the_month_is_the_same_every_run_and_in_time_order() -> None:
    lines = casas_month.generate(3)
    assert lines == casas_month.generate(3) and lines != casas_month.generate(3, seed=4)
    stamps = [datetime.fromisoformat(" ".join(line.split()[:2])) for line in lines]
    assert stamps == sorted(stamps)
    # As dense as a real apartment: thousands of lines a day.
    assert len(lines) / 3 > 2000


def test_the_importer_reads_the_two_name_layout_as_doors_lamps_and_motion(tmp_path: Path) -> None:
    items = _items(casas_month.write(tmp_path / "month.txt", days=7))
    kinds = Counter((i["payload"]["type"], i["payload"]["attributes"]["sensor"]) for i in items)
    assert kinds[("door", "OutsideDoor/FrontDoor")] > 0
    assert kinds[("lamp", "Kitchen/KitchenLight")] > 0
    assert kinds[("motion", "OutsideDoor/Entry")] > 0  # the entry's motion is not the door
    assert {i["payload"]["private"]["activity"] for i in items} >= {"Sleep", "Leave_Home"}


def test_the_planted_episodes_happen(tmp_path: Path) -> None:
    # A door left open 45 minutes and a kitchen lamp left on two hours, on some days.
    items = _items(casas_month.write(tmp_path / "month.txt", days=30))
    opened: dict[str, datetime] = {}
    longest: dict[str, float] = {}
    for item in items:
        payload = item["payload"]
        sensor, value = payload["attributes"]["sensor"], payload["value"]
        at = datetime.fromisoformat(item["occurred_at"].replace("Z", "+00:00"))
        if payload["type"] not in ("door", "lamp"):
            continue
        if value in ("OPEN", "ON"):
            opened[sensor] = at
        elif sensor in opened:
            minutes = (at - opened.pop(sensor)).total_seconds() / 60
            longest[sensor] = max(longest.get(sensor, 0.0), minutes)
    assert longest["OutsideDoor/FrontDoor"] == pytest.approx(45, abs=0.1)
    assert longest["Kitchen/KitchenLight"] == pytest.approx(120, abs=0.1)


def test_a_month_needs_a_day(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="days must be at least 1, got 0"):
        casas_month.generate(0)
    with pytest.raises(SystemExit):
        casas_month.main(["--days", "0", "--out", str(tmp_path / "m.txt")])
    assert not (tmp_path / "m.txt").exists()


def test_the_bench_replays_it_with_every_method_and_says_it_is_synthetic(tmp_path: Path) -> None:
    from perf.proactivestream import dense_home_replay

    figures = dense_home_replay(tmp_path, "proactmem,event_only", days=2)
    assert figures["synthetic"] is True and figures["days"] == 2
    assert figures["events"] == figures["lines"] > 4000
    assert figures["points"] > 0 and figures["points_per_s"] > 0
