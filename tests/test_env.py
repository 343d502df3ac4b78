from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aframes_web.env import ConfigError, env_bool, env_int, env_list, env_str

ROOT = Path(__file__).resolve().parent.parent


def test_bool_accepts_common_spellings() -> None:
    assert env_bool("X", False, environ={"X": "Yes"}) is True
    assert env_bool("X", True, environ={"X": "0"}) is False
    assert env_bool("X", True, environ={}) is True


def test_bool_rejects_garbage_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match="DEBUG='maybe' is not a boolean"):
        env_bool("DEBUG", False, environ={"DEBUG": "maybe"})


def test_int_checks_form_and_bounds() -> None:
    assert env_int("N", 5, environ={"N": "10_000"}) == 10_000
    with pytest.raises(ConfigError, match="N='ten' is not a whole number"):
        env_int("N", 5, environ={"N": "ten"})
    with pytest.raises(ConfigError, match="below the minimum of 1"):
        env_int("N", 5, minimum=1, environ={"N": "0"})


def test_list_and_str_defaults() -> None:
    assert env_list("H", ["a"], environ={"H": " x, y ,"}) == ["x", "y"]
    assert env_list("H", ["a"], environ={}) == ["a"]
    assert env_str("S", "d", environ={"S": ""}) == "d"


def settings_process(
    env: dict[str, str], tmp_path: Path, program: str
) -> subprocess.CompletedProcess[str]:
    """``program`` run by a fresh Python whose environment is this one's without the service
    settings, plus ``env``: settings read as a deployment would read them."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG", "AFRAMES_HSTS_SECONDS")
    }
    clean.update({"AFRAMES_VAR_DIR": str(tmp_path), **env})
    return subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _settings_with(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return settings_process(
        env,
        tmp_path,
        "import django; from django.conf import settings; "
        "django.setup(); print(settings.DATABASES['default']['ENGINE'], "
        "settings.CELERY_BROKER_URL)",
    )


def test_embedded_default_is_sqlite_and_filesystem_broker(tmp_path: Path) -> None:
    done = _settings_with({}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["django.db.backends.sqlite3", "filesystem://localhost/"]
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "broker" / "queue").is_dir()


def test_secret_key_required_for_a_configured_database(tmp_path: Path) -> None:
    done = _settings_with({"DATABASE_URL": "postgres://u@h:5432/d"}, tmp_path)
    assert done.returncode != 0
    assert "SECRET_KEY must be set" in done.stderr


def test_postgresql_without_redis_stops_the_settings(tmp_path: Path) -> None:
    done = _settings_with({"DATABASE_URL": "postgres://u@h:5432/d", "SECRET_KEY": "x"}, tmp_path)
    assert done.returncode != 0 and "REDIS_URL must be set" in done.stderr
    both = {"DATABASE_URL": "postgres://u@h:5432/d", "SECRET_KEY": "x", "REDIS_URL": "redis://h/0"}
    assert _settings_with(both, tmp_path).returncode == 0
    # SQLite through DATABASE_URL is still the embedded setup, with its filesystem broker.
    sqlite = {"DATABASE_URL": f"sqlite:///{tmp_path / 'x.sqlite3'}", "SECRET_KEY": "x"}
    assert _settings_with(sqlite, tmp_path).returncode == 0


def test_bad_database_and_redis_urls_fail_loudly(tmp_path: Path) -> None:
    done = _settings_with({"DATABASE_URL": "mysql://u@h/d", "SECRET_KEY": "x"}, tmp_path)
    assert "Aframes supports PostgreSQL" in done.stderr
    done = _settings_with({"REDIS_URL": "localhost:6379"}, tmp_path)
    assert "REDIS_URL='localhost:6379' must start with redis://" in done.stderr


def test_redis_url_switches_broker_results_and_cache(tmp_path: Path) -> None:
    done = _settings_with({"REDIS_URL": "redis://127.0.0.1:6379/3"}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[1] == "redis://127.0.0.1:6379/3"


def test_env_example_documents_every_variable_settings_reads() -> None:
    from tests.test_docker import settings_variables

    lines = (ROOT / ".env.example").read_text().splitlines()
    documented = {line.split("=", 1)[0] for line in lines if line and not line.startswith("#")}
    assert settings_variables() == documented
    commented = {
        lines[n + 1].split("=", 1)[0]
        for n, line in enumerate(lines[:-1])
        if line.startswith("#") and lines[n + 1] and not lines[n + 1].startswith("#")
    }
    # Each variable (or the first of a group sharing one comment) sits under its comment.
    assert documented - commented <= {
        "CELERY_TASK_SOFT_TIME_LIMIT",
        "AFRAMES_MAX_BATCH_BYTES",
        "LLM_MODEL",
        "LLM_API_KEY",
    }


def test_rate_reads_requests_per_period_and_refuses_anything_else() -> None:
    from aframes_web.env import env_rate

    assert env_rate("R", "1200/minute", environ={}) == "1200/minute"
    assert env_rate("R", "1200/minute", environ={"R": " 50/s "}) == "50/second"
    assert env_rate("R", "1200/minute", environ={"R": "7/Hour"}) == "7/hour"
    for bad in ("fast", "0/min", "10/week", "10", "-3/min", "1.5/s", "²/s"):
        with pytest.raises(ConfigError, match="is not a rate"):
            env_rate("AFRAMES_API_RATE", "1200/minute", environ={"AFRAMES_API_RATE": bad})


def test_a_bad_api_rate_stops_the_settings(tmp_path: Path) -> None:
    done = _settings_with({"AFRAMES_API_RATE": "lots"}, tmp_path)
    assert done.returncode != 0
    assert "AFRAMES_API_RATE='lots' is not a rate" in done.stderr
