"""How long routine mining and the cost report take on long SYNTHETIC action streams.

SYNTHETIC: the actions are generated here (no capture, no compile): each day holds 550-600
clicks in sessions 10 minutes apart, 40 % of them a recurring routine of 3..``--max-len``
steps drawn from ``--routines`` fixed ones, the rest random clicks over ``--vocabulary``
names (a small vocabulary makes random sequences recur too, the miner's hardest case).

    python -m perf.routines_scale --days 60 --vocabulary 30 --max-len 12

The last line is JSON: ``actions``, ``routines``, ``mine_s``, ``recurrence_s``, ``holdout_s``,
``report_s`` (action granularity, characters/4 as the token count: a cl100k_base count is the
shell's benchmark).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence

from compiler.actions import Action
from compiler.cost import report
from compiler.routines import holdout, mine, recurrence


def stream(days: int, vocabulary: int, max_len: int, routines: int, seed: int) -> list[Action]:
    rng = random.Random(seed)
    names = [f"Target {i}" for i in range(vocabulary)]
    fixed = [[rng.choice(names) for _ in range(rng.randint(3, max_len))] for _ in range(routines)]
    out: list[Action] = []
    t = 1_772_000_000.0
    event = 0
    for d in range(days):
        day = f"2026-{1 + d // 28:02d}-{1 + d % 28:02d}"
        goal = rng.randint(550, 600)
        done = 0
        while done < goal:
            t += 600
            if rng.random() < 0.4:
                steps = rng.choice(fixed)
            else:
                steps = [rng.choice(names) for _ in range(rng.randint(2, 15))]
            for name in steps:
                t += rng.uniform(1, 20)
                event += 1
                done += 1
                out.append(
                    Action(t, day, "click", name, "AXButton", "Firefox", "x.example/a",
                           f"f-{event}", (event,))
                )  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.routines_scale")
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--vocabulary", type=int, default=300)
    parser.add_argument("--max-len", type=int, default=12)
    parser.add_argument("--routines", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    actions = stream(args.days, args.vocabulary, args.max_len, args.routines, args.seed)
    figures: dict[str, float | int] = {"days": args.days, "actions": len(actions)}
    start = time.perf_counter()
    found = mine(actions)
    figures["mine_s"] = round(time.perf_counter() - start, 3)
    figures["routines"] = len(found)
    start = time.perf_counter()
    recurrence(actions, found, granularity="action")
    figures["recurrence_s"] = round(time.perf_counter() - start, 3)
    start = time.perf_counter()
    holdout(actions, fit_days=max(1, args.days // 2), granularity="action")
    figures["holdout_s"] = round(time.perf_counter() - start, 3)
    start = time.perf_counter()
    report({"action": actions}, count_tokens=lambda text: len(text) // 4 + 1)
    figures["report_s"] = round(time.perf_counter() - start, 3)
    print(
        f"routine miner on {args.days} SYNTHETIC days: {len(actions):,} actions over "
        f"{args.vocabulary} names, {len(found)} routines found ({args.routines} planted)\n"
        f"  mine {figures['mine_s']} s, recurrence {figures['recurrence_s']} s, "
        f"hold-out {figures['holdout_s']} s, cost report {figures['report_s']} s"
    )
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
