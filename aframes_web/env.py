"""Typed readers for environment variables that fail loudly on a bad value.

Settings read every value through these helpers so a typo in the environment stops the
process at start-up with a message naming the variable, instead of surfacing later.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class ConfigError(Exception):
    """An environment variable holds a value that cannot be used."""


def _raw(name: str, environ: Mapping[str, str] | None) -> str | None:
    source = os.environ if environ is None else environ
    value = source.get(name)
    return None if value is None else value.strip()


def env_str(
    name: str, default: str | None = None, *, environ: Mapping[str, str] | None = None
) -> str | None:
    value = _raw(name, environ)
    return default if value in (None, "") else value


def env_bool(name: str, default: bool, *, environ: Mapping[str, str] | None = None) -> bool:
    value = _raw(name, environ)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ConfigError(
        f"{name}={value!r} is not a boolean: use one of 1/0, true/false, yes/no, on/off."
    )


def env_int(
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    value = _raw(name, environ)
    if value in (None, ""):
        return default
    try:
        number = int(value.replace("_", ""))
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not a whole number.") from None
    if minimum is not None and number < minimum:
        raise ConfigError(f"{name}={number} is below the minimum of {minimum}.")
    if maximum is not None and number > maximum:
        raise ConfigError(f"{name}={number} is above the maximum of {maximum}.")
    return number


def env_list(
    name: str, default: list[str], *, environ: Mapping[str, str] | None = None
) -> list[str]:
    value = _raw(name, environ)
    if value in (None, ""):
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


_RATE_PERIODS = {"s": "second", "m": "minute", "h": "hour", "d": "day"}


def env_rate(name: str, default: str, *, environ: Mapping[str, str] | None = None) -> str:
    """A request rate ``N/period``: N a whole number from 1, period second, minute, hour or day
    (or s, sec, min, m, h, d), as DRF's throttles read it."""
    value = _raw(name, environ)
    if value in (None, ""):
        value = default
    count, slash, period = value.partition("/")
    count, period = count.strip(), period.strip().lower()
    words = {"s", "sec", "second", "m", "min", "minute", "h", "hour", "d", "day"}
    whole = count.isascii() and count.isdigit()
    if not slash or not whole or int(count) < 1 or period not in words:
        raise ConfigError(
            f"{name}={value!r} is not a rate: write requests per period, e.g. 1200/minute "
            "(periods: second, minute, hour, day)."
        )
    return f"{int(count)}/{_RATE_PERIODS[period[0]]}"
