"""The production container setup (docker/) agrees with the settings, entrypoint and packaging.

There is no Docker engine in CI, so these tests read the Dockerfile, compose file and entrypoint
as text and check them against what the application actually reads and ships.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dj_database_url
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCKER_DIR = ROOT / "docker"
DOCKERFILE = DOCKER_DIR / "Dockerfile"
COMPOSE = DOCKER_DIR / "compose.yaml"
ENTRYPOINT = DOCKER_DIR / "entrypoint.sh"
SETTINGS = ROOT / "aframes_web" / "settings.py"

APP_SERVICES = ("web", "worker", "beat")
# What settings.py needs before it behaves as a production deployment rather than the
# embedded default (SQLite, filesystem broker, secret key in a local file, localhost only).
PRODUCTION_VARIABLES = {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ALLOWED_HOSTS"}
# The variables compose refuses to start without: an operator types these.
DEPLOY_ENV = {"POSTGRES_PASSWORD": "s3cret-pw", "SECRET_KEY": "not-a-real-secret"}


# --- Reading the files ----------------------------------------------------------------------
class MissingVariableError(Exception):
    """Compose would refuse to start: a ``${NAME:?message}`` variable is unset or empty."""


_COMPOSE_VARIABLE = re.compile(
    r"\$(?:(?P<escaped>\$)"
    r"|\{(?P<name>[A-Za-z_]\w*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}"
    r"|(?P<bare>[A-Za-z_]\w*))"
)


def interpolate(text: str, env: Mapping[str, str]) -> str:
    """Substitute variables as Docker Compose does: ``$$``, ``${X}``, ``:-``, ``-``, ``:?``."""

    def replace(match: re.Match[str]) -> str:
        if match["escaped"]:
            return "$"
        name = match["name"] or match["bare"]
        op, arg = match["op"], match["arg"] or ""
        value = env.get(name)
        unset = value is None or (op is not None and op.startswith(":") and value == "")
        if op is not None and op.endswith("-"):
            return arg if unset else str(value)
        if op is not None and op.endswith("?"):
            if unset:
                raise MissingVariableError(f"{name}: {arg}")
            return str(value)
        return value or ""

    return _COMPOSE_VARIABLE.sub(replace, text)


def resolve(node: Any, env: Mapping[str, str]) -> Any:
    if isinstance(node, str):
        return interpolate(node, env)
    if isinstance(node, dict):
        return {key: resolve(value, env) for key, value in node.items()}
    if isinstance(node, list):
        return [resolve(value, env) for value in node]
    return node


def load_compose(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The compose file as Compose sees it after interpolation (raw when ``env`` is None)."""
    raw = yaml.safe_load(COMPOSE.read_text())
    return raw if env is None else resolve(raw, env)


def environment_of(service: Mapping[str, Any]) -> dict[str, str]:
    environment = service.get("environment") or {}
    if isinstance(environment, list):  # the "- NAME=value" form
        return dict(item.split("=", 1) if "=" in item else (item, "") for item in environment)
    return {name: "" if value is None else str(value) for name, value in environment.items()}


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for line in DOCKERFILE.read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        keyword, _, arguments = (pending + stripped).partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
        pending = ""
    return instructions


def dockerfile_args(keyword: str) -> list[str]:
    return [arguments for found, arguments in dockerfile_instructions() if found == keyword]


def dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for arguments in dockerfile_args("ENV"):
        for token in shlex.split(arguments):
            name, _, value = token.partition("=")
            env[name] = value
    return env


def settings_variables() -> set[str]:
    """Every environment variable settings.py reads through the typed env helpers."""
    pattern = re.compile(r"\benv_(?:str|bool|int|list|rate)\(\s*[\"']([A-Z][A-Z0-9_]*)[\"']")
    return set(pattern.findall(SETTINGS.read_text()))


def entrypoint_variables() -> set[str]:
    return set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)", ENTRYPOINT.read_text()))


def entrypoint_roles() -> set[str]:
    roles: set[str] = set()
    for pattern in re.findall(r"^\s*([\w|*-]+)\)\s*$", ENTRYPOINT.read_text(), re.MULTILINE):
        roles.update(pattern.split("|"))
    return roles


# --- compose.yaml ---------------------------------------------------------------------------
def test_compose_defines_postgres_redis_web_worker_and_beat() -> None:
    assert set(load_compose()["services"]) == {"postgres", "redis", *APP_SERVICES}


def test_compose_has_no_obsolete_version_key() -> None:
    assert "version" not in load_compose()


def test_app_services_run_one_image_built_from_the_repository_root() -> None:
    services = load_compose()["services"]
    builds = [services[name]["build"] for name in APP_SERVICES]
    assert builds[0] == builds[1] == builds[2]
    assert len({services[name].get("image") for name in APP_SERVICES}) == 1
    assert (DOCKER_DIR / builds[0]["context"]).resolve() == ROOT
    assert (ROOT / builds[0]["dockerfile"]).resolve() == DOCKERFILE


def test_every_variable_the_app_services_set_is_read_by_settings_or_the_entrypoint() -> None:
    readable = settings_variables() | entrypoint_variables()
    services = load_compose()["services"]
    for name in APP_SERVICES:
        unread = set(environment_of(services[name])) - readable
        assert not unread, f"{name} sets {sorted(unread)}, which nothing reads"


def test_app_services_set_every_variable_a_production_deployment_needs() -> None:
    assert settings_variables() >= PRODUCTION_VARIABLES
    services = load_compose(DEPLOY_ENV)["services"]
    for name in APP_SERVICES:
        environment = environment_of(services[name])
        empty = {var for var in PRODUCTION_VARIABLES if not environment.get(var)}
        assert not empty, f"{name} leaves {sorted(empty)} unset"


def test_compose_refuses_to_start_without_the_database_password_and_secret_key() -> None:
    for missing in DEPLOY_ENV:
        env = {name: value for name, value in DEPLOY_ENV.items() if name != missing}
        with pytest.raises(MissingVariableError, match=missing):
            load_compose(env)
    load_compose(DEPLOY_ENV)


@pytest.mark.parametrize(
    "overrides",
    [{}, {"POSTGRES_DB": "memory", "POSTGRES_USER": "ops"}],
    ids=["defaults", "overridden"],
)
def test_database_url_points_at_the_postgres_service_with_its_database_and_user(
    overrides: dict[str, str],
) -> None:
    services = load_compose({**DEPLOY_ENV, **overrides})["services"]
    postgres = environment_of(services["postgres"])
    for name in APP_SERVICES:
        database = dj_database_url.parse(environment_of(services[name])["DATABASE_URL"])
        assert database["ENGINE"] == "django.db.backends.postgresql"
        assert database["HOST"] == "postgres"
        assert database["PORT"] == 5432
        assert database["NAME"] == postgres["POSTGRES_DB"]
        assert database["USER"] == postgres["POSTGRES_USER"]
        assert (
            database["PASSWORD"] == postgres["POSTGRES_PASSWORD"] == DEPLOY_ENV["POSTGRES_PASSWORD"]
        )


def test_redis_url_points_at_the_redis_service() -> None:
    services = load_compose(DEPLOY_ENV)["services"]
    for name in APP_SERVICES:
        url = urlsplit(environment_of(services[name])["REDIS_URL"])
        assert (url.scheme, url.hostname, url.port) == ("redis", "redis", 6379)


def test_postgres_redis_and_web_have_healthchecks() -> None:
    services = load_compose()["services"]
    for name in ("postgres", "redis", "web"):
        healthcheck = services[name].get("healthcheck") or {}
        assert healthcheck.get("test") and not healthcheck.get("disable"), name
    assert "/healthz" in " ".join(services["web"]["healthcheck"]["test"])


def test_app_services_start_only_after_their_dependencies_are_healthy() -> None:
    services = load_compose()["services"]
    for name in APP_SERVICES:
        depends_on = services[name]["depends_on"]
        assert isinstance(depends_on, dict), f"{name}: depends_on needs conditions"
        assert {"postgres", "redis"} <= set(depends_on)
        for dependency, condition in depends_on.items():
            assert condition["condition"] == "service_healthy", f"{name} -> {dependency}"
            assert services[dependency].get("healthcheck", {}).get("test"), dependency


def test_app_services_run_web_worker_and_beat_roles_the_entrypoint_handles() -> None:
    services = load_compose()["services"]
    commands = {}
    for name in APP_SERVICES:
        command = services[name]["command"]
        commands[name] = command if isinstance(command, str) else " ".join(command)
    assert commands == {"web": "web", "worker": "worker", "beat": "beat"}
    assert entrypoint_roles() >= {"web", "worker", "beat", "manage", "*"}


def test_worker_count_is_one_setting_and_beat_stays_single() -> None:
    services = load_compose()["services"]
    assert int(load_compose(DEPLOY_ENV)["services"]["worker"]["deploy"]["replicas"]) == 2
    scaled = load_compose({**DEPLOY_ENV, "WORKERS": "5"})["services"]
    assert int(scaled["worker"]["deploy"]["replicas"]) == 5
    assert int(services["beat"].get("deploy", {}).get("replicas", 1)) == 1


def test_app_services_share_the_var_volume_at_the_image_var_dir() -> None:
    compose = load_compose()
    var_dir = dockerfile_env()["AFRAMES_VAR_DIR"]
    for name in APP_SERVICES:
        mounts = dict(volume.split(":", 1)[::-1] for volume in compose["services"][name]["volumes"])
        assert mounts.get(var_dir) in compose["volumes"], name
    assert f"--schedule {var_dir}/" in ENTRYPOINT.read_text()


# --- entrypoint.sh --------------------------------------------------------------------------
def test_entrypoint_is_valid_posix_shell_that_stops_on_errors() -> None:
    result = subprocess.run(["sh", "-n", str(ENTRYPOINT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = ENTRYPOINT.read_text().splitlines()
    assert lines[0] == "#!/bin/sh"
    assert "set -eu" in lines


def test_worker_and_beat_load_the_aframes_celery_app() -> None:
    from aframes_web.celery import app

    names = re.findall(r"\bcelery -A (\S+)", ENTRYPOINT.read_text())
    worker_check = " ".join(load_compose()["services"]["worker"]["healthcheck"]["test"])
    names += re.findall(r"\bcelery -A (\S+)", worker_check)
    assert len(names) >= 3
    assert set(names) == {app.main}


def test_web_role_serves_the_configured_asgi_application_on_uvicorn_workers() -> None:
    import importlib

    from django.conf import settings

    text = ENTRYPOINT.read_text()
    served = re.search(r"\bgunicorn (\S+):(\w+)", text)
    assert served is not None
    assert f"{served[1]}.{served[2]}" == settings.ASGI_APPLICATION
    worker = re.search(r"--worker-class (\S+)\.(\w+)", text)
    assert worker is not None, "gunicorn needs an ASGI worker class for the MCP server"
    assert callable(getattr(importlib.import_module(worker[1]), worker[2]))


# --- Dockerfile -----------------------------------------------------------------------------
def test_dockerfile_runs_as_a_non_root_user() -> None:
    users = dockerfile_args("USER")
    assert users, "no USER instruction: the container would run as root"
    assert users[-1].split(":")[0] not in {"root", "0"}


def test_dockerfile_healthcheck_requests_the_health_endpoint() -> None:
    from aframes_web.health import HEALTH_PATH

    healthchecks = dockerfile_args("HEALTHCHECK")
    assert len(healthchecks) == 1
    url = re.search(r"http://127\.0\.0\.1:(\d+)(/\S*?)['\"]", healthchecks[0])
    assert url is not None
    assert url[1] in dockerfile_args("EXPOSE")
    assert url[2] == HEALTH_PATH


def test_dockerfile_exposes_the_port_compose_publishes_for_web() -> None:
    published = load_compose()["services"]["web"]["ports"]
    container_ports = {str(port).rsplit(":", 1)[-1].split("/")[0] for port in published}
    assert container_ports == {"8000"}
    assert dockerfile_args("EXPOSE") == ["8000"]
    assert "0.0.0.0:8000" in ENTRYPOINT.read_text()


def test_dockerfile_copies_every_package_setuptools_installs() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {pattern.rstrip("*").split(".")[0] for pattern in include}
    copied = {
        Path(source).parts[0]
        for arguments in dockerfile_args("COPY")
        for source in shlex.split(arguments)[:-1]
        if not source.startswith("--")
    }
    assert packages <= copied, f"not copied: {sorted(packages - copied)}"
    # settings.py serves templates/ and static/ from BASE_DIR; manage.py runs the web role.
    assert {"manage.py", "templates", "static", "pyproject.toml", "README.md"} <= copied


def test_dockerfile_entrypoint_is_the_copied_script() -> None:
    copies = [shlex.split(arguments) for arguments in dockerfile_args("COPY")]
    target = next(parts[-1] for parts in copies if parts[0] == "docker/entrypoint.sh")
    entrypoint = dockerfile_args("ENTRYPOINT")
    assert len(entrypoint) == 1
    program = yaml.safe_load(entrypoint[0])[0]  # the JSON (exec) form
    assert target.endswith(f"/{program}") or target == program
    assert yaml.safe_load(dockerfile_args("CMD")[0]) == ["web"]


def test_build_time_collectstatic_succeeds_with_only_the_image_environment(
    tmp_path: Path,
) -> None:
    """Runs the Dockerfile's collectstatic line as the build would, outside Docker."""
    run_line = next(
        arguments for arguments in dockerfile_args("RUN") if "collectstatic" in arguments
    )
    command = shlex.split(run_line.split("&&")[0])
    build_env = {
        **dockerfile_env(),
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(ROOT),
        "AFRAMES_VAR_DIR": str(tmp_path / "var"),
        "STATIC_ROOT": str(tmp_path / "staticfiles"),
    }
    while "=" in command[0]:
        name, _, value = command.pop(0).partition("=")
        build_env[name] = value
    # The build sees no deployment variables: no database, broker or key beyond this line's.
    assert build_env["SECRET_KEY"] and build_env["DATABASE_URL"] == ""
    assert command[:2] == ["python", "manage.py"]
    result = subprocess.run(
        [sys.executable, *command[1:]],
        cwd=ROOT,
        env=build_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "staticfiles" / "css" / "aframes.css").exists()


# Settings the image itself fixes, or that no deployment sets; compose passes every other one.
IMAGE_OWNED = {
    "AFRAMES_VAR_DIR": "the Dockerfile sets /app/var, the shared volume",
    "STATIC_ROOT": "the Dockerfile collects static files into /app/staticfiles at build time",
    "CELERY_TASK_ALWAYS_EAGER": "runs tasks inline in the calling process: tests and demos only",
}


def test_compose_passes_every_setting_into_the_containers_from_the_same_named_variable() -> None:
    services = load_compose(DEPLOY_ENV)["services"]
    raw = yaml.safe_load(COMPOSE.read_text())["x-aframes-env"]
    wanted = settings_variables() - set(IMAGE_OWNED)
    for name in APP_SERVICES:
        missing = wanted - set(environment_of(services[name]))
        assert not missing, f"{name} does not pass {sorted(missing)}"
    # Each is the operator's variable of the same name (with its default), never a constant,
    # except the three compose builds from its own services and the operator's password.
    built = {"DATABASE_URL", "REDIS_URL"}
    for variable in wanted - built:
        assert re.fullmatch(rf"\$\{{{variable}(:[-?][^}}]*)?\}}", str(raw[variable])), variable
    assert set(IMAGE_OWNED) <= settings_variables()


def test_an_empty_passed_variable_means_the_settings_default(tmp_path: Path) -> None:
    """Compose passes ``NAME=`` for a variable the operator left unset: settings must read
    that as unset, not as a bad value."""
    raw = yaml.safe_load(COMPOSE.read_text())["x-aframes-env"]
    empty = {name: "" for name, value in raw.items() if str(value).endswith(":-}")}
    assert len(empty) > 10
    from tests.test_env import settings_process

    done = settings_process(empty, tmp_path, "import django; django.setup()")
    assert done.returncode == 0, done.stderr


LOCK = DOCKER_DIR / "requirements.lock"


def _locked() -> dict[str, tuple[str, int]]:
    """Package name (normalised) -> (pinned version, number of hashes) from the lock file."""
    pins: dict[str, tuple[str, int]] = {}
    current = ""
    for line in LOCK.read_text().splitlines():
        pin = re.match(r"^([A-Za-z0-9_.-]+)==([^ \\]+)", line)
        if pin:
            current = re.sub(r"[-_.]+", "-", pin[1]).lower()
            pins[current] = (pin[2], 0)
        elif "--hash=sha256:" in line and current:
            version, hashes = pins[current]
            pins[current] = (version, hashes + 1)
    return pins


def test_the_image_installs_exact_hashed_versions_then_the_project_without_resolving() -> None:
    runs = [args for instruction, args in dockerfile_instructions() if instruction == "RUN"]
    installs = [args for args in runs if "pip install" in args]
    assert any("--require-hashes -r docker/requirements.lock" in args for args in installs)
    project = [args for args in installs if re.search(r"pip install[^&]* \.(\s|$)", args)]
    assert project and all("--no-deps" in args for args in project)
    copies = [args for instruction, args in dockerfile_instructions() if instruction == "COPY"]
    assert "docker/requirements.lock ./docker/requirements.lock" in copies


def test_the_lock_file_pins_every_runtime_dependency_within_its_range_with_hashes() -> None:
    from packaging.requirements import Requirement

    text = LOCK.read_text()
    assert "--index-url" not in text and "--find-links" not in text  # no machine's mirror
    pins = _locked()
    assert pins and all(hashes > 0 for _version, hashes in pins.values())
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for line in dependencies:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        assert name in pins, f"{requirement.name} is not in {LOCK.name}; regenerate it"
        version = pins[name][0]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{requirement.name}=={version} in {LOCK.name} is outside {requirement.specifier}"
        )
