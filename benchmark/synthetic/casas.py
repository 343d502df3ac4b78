"""SYNTHETIC CASAS smart-home logs in the native text layouts, for tests of the casas importer.

No CASAS file is in ``../shared/data`` (WSU asks that the data not be redistributed), so the
importer is exercised on small files written here. Nothing here was recorded in a home: the
lines are invented, shaped like the real layouts and their quirks (a tab or a space between date
and time, mixed separators, empty trailing fields, a missing fraction of a second, lines out of
time order, overlapping ``Name begin`` / ``Name end`` and numbered ``N-begin`` / ``N-end``
annotations, a night across the autumn daylight-saving change in the homes' zone). Standard
library only; the output is always the same.

Layouts (see ``aframes_web/streams/importers/casas.py`` for what was assumed about each):

- ``classic``: ``date time sensor value [annotation]`` (adlnormal, twor, aruba, milan style)
- ``rooms``:   ``date time sensor room value label``, a label on every line
- ``hh``:      ``date time sensor room detail message sensortype [activity]`` (UCI README)

    python -m benchmark.synthetic.casas --form classic --out night.txt [--bad-lines] [--crlf]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

FORMS = ("classic", "rooms", "hh")
ZONE = "America/Los_Angeles"  # CASAS homes are around WSU, Pullman (Pacific time)
T = "\t"

# The autumn-change night of 2009-11-01: 01:40 local happens twice; the log cannot say which.
CLASSIC = (
    f"2009-10-31{T}23:55:00.012345{T}D001{T}CLOSE",
    f"2009-10-31{T}23:58:01.102345{T}M021{T}ON{T}Sleeping begin",
    f"2009-10-31 23:58:03.50211{T}M021{T}OFF",  # space before the time, five-digit fraction
    "2009-11-01 00:30:12 T001 21.5",  # spaces only, whole seconds
    f"2009-11-01{T}01:40:00.000100{T}M021{T}ON{T}{T}",  # the repeated hour; empty fields
    f"2009-11-01{T}01:40:02.000200{T}M021{T}OFF",
    f"2009-11-01{T}06:58:10.400000{T}M021{T}ON{T}Sleeping end",
    f"2009-11-01{T}07:01:30.000000{T}M017{T}ON{T}Meal_Preparation begin",
    f"2009-11-01{T}07:02:00.250000{T}I03{T}ABSENT{T}1-begin",
    f"2009-11-01{T}07:03:12.000000{T}M017{T}OFF",
    f"2009-11-01{T}07:01:31.500000{T}L003{T}ON",  # out of order: belongs after line 8
    f"2009-11-01{T}07:04:00.750000{T}T002{T}22",
    f"2009-11-01{T}07:05:45.000000{T}I03{T}PRESENT{T}1-end",
    f"2009-11-01{T}07:06:10.000000{T}AD1-A{T}2.82",
    f"2009-11-01{T}07:10:00.000000{T}M030{T}ON{T}R2_Sleep begin",
    f"2009-11-01{T}07:12:00.000000{T}M017{T}ON",  # inside Meal_Preparation and R2_Sleep
    f"2009-11-01{T}07:20:00.000000{T}M017{T}OFF{T}Meal_Preparation end",
    f"2009-11-01{T}07:40:00.000000{T}M030{T}OFF{T}R2_Sleep end",
    f"2009-11-01 {T}07:45:00.000000{T}D001{T}OPEN",
)
# What private["activity"] should say for each CLASSIC line, in the same order.
CLASSIC_ACTIVITY: tuple[str | list[str] | None, ...] = (
    None,
    *("Sleeping",) * 6,
    "Meal_Preparation",
    ["Meal_Preparation", "1"],
    ["Meal_Preparation", "1"],
    "Meal_Preparation",
    ["Meal_Preparation", "1"],
    ["Meal_Preparation", "1"],
    "Meal_Preparation",
    *(["Meal_Preparation", "R2_Sleep"],) * 3,
    "R2_Sleep",
    None,
)

ROOMS = (
    f"2011-06-15 00:06:32.834414{T}M008{T}Bedroom{T}ON{T}Sleep",
    f"2011-06-15{T}00:06:35.100000{T}M008{T}Bedroom{T}OFF{T}Sleep",
    f"2011-06-15{T}00:40:00{T}T102{T}Bedroom{T}21.5{T}Sleep",
    f"2011-06-15{T}03:10:00.000000{T}D004{T}Bathroom{T}OPEN{T}Bed_Toilet_Transition",
    f"2011-06-15{T}03:12:30.500000{T}D004{T}Bathroom{T}CLOSE{T}Bed_Toilet_Transition",
    f"2011-06-15{T}07:30:00.000000{T}M012{T}Kitchen{T}ON{T}Cook_Breakfast",
    f"2011-06-15{T}07:31:00.000000{T}LS012{T}Kitchen{T}34{T}Cook_Breakfast",
    f"2011-06-15{T}07:45:00.000000{T}M012{T}Kitchen{T}OFF{T}",  # an empty label field
    f"2011-06-15{T}07:44:00.000000{T}MA015{T}LivingRoom{T}ON{T}Relax",  # out of order
)
ROOMS_ACTIVITY: tuple[str | None, ...] = (
    "Sleep",
    "Sleep",
    "Sleep",
    "Bed_Toilet_Transition",
    "Bed_Toilet_Transition",
    "Cook_Breakfast",
    "Cook_Breakfast",
    None,
    "Relax",
)

HH = (
    f"2012-07-18 12:54:45.399416{T}T103{T}Bathroom{T}BathroomTemp{T}25{T}Control4-Temperature"
    f"{T}Personal_Hygiene",
    f"2012-07-18 12:54:45.472391{T}BATP103{T}Ignore{T}Ignore{T}82{T}Control4-BatteryPercent"
    f"{T}Personal_Hygiene",
    # the raw layout, seven fields: no activity on this line
    f"2012-07-18 12:54:45.682577{T}MA016{T}Kitchen{T}Kitchen{T}OFF{T}Control4-MotionArea",
    f"2012-07-18 12:54:45.723461{T}D003{T}Bathroom{T}BathroomDoor{T}OPEN{T}Control4-Door"
    f"{T}Personal_Hygiene",
    f"2012-07-18 12:54:45.767498{T}M009{T}Bedroom{T}Bedroom{T}ON{T}Control4-Motion{T}Sleep",
    f"2012-07-18 12:54:46.100000{T}LL009{T}Bedroom{T}BedroomLight{T}100{T}Control4-Light{T}Sleep",
    f"2012-07-18 12:54:47.000000{T}B009{T}Bedroom{T}Switch{T}TAP_COUNT_01{T}Control4-Button"
    f"{T}Sleep",
)
HH_ACTIVITY: tuple[str | None, ...] = (
    "Personal_Hygiene",
    "Personal_Hygiene",
    None,
    "Personal_Hygiene",
    "Sleep",
    "Sleep",
    "Sleep",
)

GOOD = {"classic": CLASSIC, "rooms": ROOMS, "hh": HH}
ACTIVITY = {"classic": CLASSIC_ACTIVITY, "rooms": ROOMS_ACTIVITY, "hh": HH_ACTIVITY}

# Lines that cannot be read, inserted after this many good lines: (line, what is wrong).
BAD_AFTER = 3
BAD = {
    "classic": (
        (f"2009-11-31{T}07:30:00.000000{T}M017{T}ON", "not a valid date"),
        (f"2009-11-01{T}07:31:00.000000{T}M017{T}", "has no value"),
        (f"2009-11-01{T}7h32{T}M017{T}ON", "not a time"),
    ),
    "rooms": (
        (f"2011/06/15{T}07:50:00.000000{T}M012{T}Kitchen{T}ON{T}Relax", "not a date"),
        (f"2011-06-15{T}07:51:00.000000{T}M012", "has no value"),
    ),
    "hh": ((f"2012-07-18 12:54:48.000000{T}{T}{T}", "no sensor or value"),),
}


def lines(form: str, *, bad_lines: bool = False) -> list[str]:
    """The file's lines (without line ends)."""
    if form not in GOOD:
        raise ValueError(f"unknown form {form!r}; one of {', '.join(FORMS)}")
    good = list(GOOD[form])
    if not bad_lines:
        return good
    return [*good[:BAD_AFTER], *(text for text, _ in BAD[form]), *good[BAD_AFTER:]]


def bad_line_numbers(form: str) -> dict[int, str]:
    """{line number: part of the importer's message} for the lines ``bad_lines`` inserts."""
    return {BAD_AFTER + 1 + i: reason for i, (_, reason) in enumerate(BAD[form])}


def write(path: str | Path, form: str, *, bad_lines: bool = False, crlf: bool = False) -> Path:
    """Write a SYNTHETIC ``form`` file to ``path`` (replaced if it exists)."""
    path = Path(path)
    end = "\r\n" if crlf else "\n"
    path.write_bytes("".join(line + end for line in lines(form, bad_lines=bad_lines)).encode())
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmark.synthetic.casas",
        description="Write a small SYNTHETIC CASAS smart-home log in a native layout.",
    )
    parser.add_argument("--form", required=True, choices=FORMS)
    parser.add_argument("--out", required=True, help="output file (replaced if it exists)")
    parser.add_argument("--bad-lines", action="store_true", help="include unreadable lines")
    parser.add_argument("--crlf", action="store_true", help="end lines with CRLF")
    args = parser.parse_args(argv)
    path = write(args.out, args.form, bad_lines=args.bad_lines, crlf=args.crlf)
    count = len(lines(args.form, bad_lines=args.bad_lines))
    print(f"wrote SYNTHETIC CASAS {args.form} log to {path}: {count} lines (zone {ZONE})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
