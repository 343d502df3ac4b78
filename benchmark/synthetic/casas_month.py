"""A SYNTHETIC month of a one-person apartment in the CASAS two-name layout, for replay speed.

Nothing here was recorded in a home. The lines are invented in the layout of the real
AL-Smarthome files (``date time place device value activity``: ``Kitchen KitchenLight ON
Cook_Breakfast``, ``OutsideDoor FrontDoor OPEN Leave_Home``; REFERENCE.md, "CASAS layouts"),
as dense as a real apartment's month (about 2,800 lines a day: motion every 15-20 s in the room
the resident is in), which the bundled Ordóñez homes are not (about 180 events a day). It
exists so that ``make bench-proactivestream`` can say how fast a month of such a home replays,
the case the replay speed target is written for; no effectiveness is scored on it.

The resident sleeps in the bedroom (a motion a few minutes apart), gets up at 07:00 on
weekdays and 08:30 at weekends (bathroom, its lamp; breakfast in the kitchen, its lamp),
leaves by the front door at 08:40 on weekdays and comes back at 17:30, spends weekend
mornings and every evening in the living room with its lamp on, cooks dinner at 18:40 and
goes to bed after 22:45. Now and then (seeded, the same every run): breakfast is skipped (one
day in eight), the kitchen lamp is left on for two hours (one breakfast in ten), the front door
stays open 45 minutes on leaving (one weekday in ten), the living-room lamp burns until
23:55 (one evening in ten). Standard library only; the same (days, seed) always gives the
same lines.

    python -m benchmark.synthetic.casas_month --days 30 --out month.txt
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta
from pathlib import Path

ZONE = "America/Los_Angeles"  # CASAS homes are around WSU, Pullman (Pacific time)
FIRST_DAY = date(2011, 6, 1)
SEED = 3


class _Home:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lines: list[tuple[datetime, str]] = []

    def line(self, at: datetime, place: str, device: str, value: str, activity: str) -> None:
        self.lines.append((at, f"{at:%Y-%m-%d %H:%M:%S.%f} {place} {device} {value} {activity}"))

    def motion(
        self, start: datetime, end: datetime, place: str, device: str, activity: str, every: float
    ) -> None:
        """Motion ON, OFF a few seconds later, again about every ``every`` seconds."""
        at = start
        while at < end:
            self.line(at, place, device, "ON", activity)
            off = at + timedelta(seconds=self.rng.uniform(2, 6))
            self.line(off, place, device, "OFF", activity)
            at = off + timedelta(seconds=self.rng.uniform(every * 0.5, every * 1.5))

    def switch(self, on: datetime, off: datetime, place: str, device: str, activity: str) -> None:
        self.line(on, place, device, "ON", activity)
        self.line(off, place, device, "OFF", activity)

    def door(self, at: datetime, minutes: float, activity: str) -> None:
        self.line(at, "OutsideDoor", "FrontDoor", "OPEN", activity)
        self.line(at + timedelta(minutes=minutes), "OutsideDoor", "FrontDoor", "CLOSE", activity)
        self.motion(
            at - timedelta(seconds=30), at + timedelta(seconds=40), "OutsideDoor", "Entry",
            activity, 8,
        )  # fmt: skip

    def day(self, day: date) -> None:
        rng = self.rng
        weekday = day.weekday() < 5

        def at(hour: int, minute: float = 0) -> datetime:
            return datetime.combine(day, time()) + timedelta(
                hours=hour, minutes=minute + rng.uniform(-10, 10)
            )

        self.motion(at(0, 30), at(6, 50), "Bedroom", "Bed", "Sleep", 300)
        up = at(7) if weekday else at(8, 30)
        self.motion(
            up, up + timedelta(minutes=20), "Bathroom", "BathroomArea", "Personal_Hygiene", 15
        )
        self.switch(up, up + timedelta(minutes=18), "Bathroom", "BathroomLight", "Personal_Hygiene")
        breakfast = up + timedelta(minutes=25)
        if rng.random() >= 1 / 8:
            lit = 120 if rng.random() < 0.1 else 35
            self.switch(
                breakfast, breakfast + timedelta(minutes=lit), "Kitchen", "KitchenLight",
                "Cook_Breakfast",
            )  # fmt: skip
            self.motion(
                breakfast, breakfast + timedelta(minutes=35), "Kitchen", "KitchenArea",
                "Cook_Breakfast", 15,
            )  # fmt: skip
        if weekday:
            self.door(at(8, 40), 45 if rng.random() < 0.1 else rng.uniform(0.5, 3), "Leave_Home")
            home = at(17, 30)
            self.door(home, rng.uniform(0.5, 2), "Enter_Home")
        else:
            home = breakfast + timedelta(minutes=40)
            self.motion(home, at(12), "LivingRoom", "Couch", "Relax", 20)
            self.switch(home, at(11), "LivingRoom", "LivingLight", "Relax")
            home = at(12)
        dinner = at(18, 40)
        self.motion(home, dinner, "LivingRoom", "Couch", "Relax", 20)
        self.motion(
            dinner, dinner + timedelta(minutes=45), "Kitchen", "KitchenArea", "Cook_Dinner", 15
        )
        self.switch(
            dinner, dinner + timedelta(minutes=50), "Kitchen", "KitchenLight", "Cook_Dinner"
        )
        evening = dinner + timedelta(minutes=50)
        self.motion(evening, at(22, 45), "LivingRoom", "Couch", "Watch_TV", 20)
        late = at(23, 55) if rng.random() < 0.1 else at(22, 45)
        self.switch(evening, late, "LivingRoom", "LivingLight", "Watch_TV")
        self.motion(at(22, 50), at(23, 10), "Bathroom", "BathroomArea", "Personal_Hygiene", 15)


def generate(days: int = 30, seed: int = SEED, first: date = FIRST_DAY) -> list[str]:
    """The month's lines in time order (naive local time, the home's zone :data:`ZONE`)."""
    if days < 1:
        raise ValueError(f"days must be at least 1, got {days}")
    home = _Home(seed)
    for n in range(days):
        home.day(first + timedelta(days=n))
    home.lines.sort()
    return [text for _at, text in home.lines]


def write(path: Path, days: int = 30, seed: int = SEED) -> Path:
    path.write_text("\n".join(generate(days, seed)) + "\n", encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmark.synthetic.casas_month",
        description="Write a SYNTHETIC month of a CASAS two-name-layout apartment.",
    )
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.days < 1:
        parser.error(f"--days must be at least 1, got {args.days}")
    write(args.out, args.days, args.seed)
    print(f"{args.out}: {args.days} SYNTHETIC days in the CASAS two-name layout ({ZONE})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
