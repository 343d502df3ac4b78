"""The README's API and MCP examples, run as written against the demo that `make run` loads.

A fresh database gets `migrate` and `load_demo`; `manage.py serve` serves it; then every shell
block of the API sections that calls the server runs in bash with the variables the README
tells a reader to set (`TOKEN`, `AFRAMES_URL`), in a folder laid out as a checkout is
(`var/demo_token`). A failing request fails the test: `curl` is wrapped to fail on HTTP errors.
The only change made to a block is the port: the server runs on a free one, not 8000.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from perf.harness import free_port

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# The sections whose examples talk to a running server.
SECTIONS = (
    "## REST API (v1)",
    "### REST: days, frames, context, evidence",
    "## Routines, replay plans and cost",
    "### API and pages",
    "## Labelling: the annotation workbench",
    "## MCP: Aframes for agents",
)
# Blocks that need what a test cannot have: another machine's tools or a reader's own values.
NOT_RUNNABLE = ("claude mcp add", "docker compose", "/path/to/", "afr_...", "aframes-sync")


def _sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) of each section named in SECTIONS, body up to the next heading of the
    same or a higher level."""
    # Headings are looked for outside code blocks, whose comment lines also start with "#".
    prose = re.sub(r"```.*?```", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    found = []
    for heading in SECTIONS:
        start = prose.find(f"\n{heading}\n")
        assert start >= 0, f"README has no section {heading!r}"
        level = heading.split(" ")[0]
        stop = re.compile(rf"\n#{{1,{len(level)}}} ")
        after = stop.search(prose, start + len(heading) + 2)
        found.append((heading, text[start : after.start() if after else len(text)]))
    return found


def blocks(language: str) -> list[tuple[str, str]]:
    text = README.read_text()
    fence = re.compile(rf"```{language}\n(.*?)```", re.S)
    picked = []
    for heading, body in _sections(text):
        for match in fence.finditer(body):
            code = match.group(1)
            if any(marker in code for marker in NOT_RUNNABLE):
                continue
            if language == "python" or "curl" in code:
                picked.append((heading, code))
    return picked


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str], str]]:
    folder = tmp_path_factory.mktemp("readme")
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{folder / 'var' / 'aframes.sqlite3'}",
        "AFRAMES_VAR_DIR": str(folder / "var"),
        "SECRET_KEY": "readme-test",
        "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("REDIS_URL", None)
    (folder / "var").mkdir()
    # The README's commands say `.venv/bin/python manage.py`: the folder looks like a checkout.
    (folder / ".venv").symlink_to(Path(sys.executable).parent.parent)
    (folder / "manage.py").symlink_to(ROOT / "manage.py")
    manage = [sys.executable, str(ROOT / "manage.py")]
    for command in (["migrate", "--noinput"], ["load_demo"]):
        subprocess.run([*manage, *command], env=env, cwd=folder, check=True, capture_output=True)
    port = free_port()
    # As `make run` serves: the web server and its worker, which compiles the demo's days.
    server = subprocess.Popen(
        [*manage, "serve", "--port", str(port)],
        env=env,
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=2).read()
            break
        except OSError:
            assert time.monotonic() < deadline and server.poll() is None, "serve did not start"
            time.sleep(0.2)
    token = (folder / "var" / "demo_token").read_text().strip()
    days = urllib.request.Request(
        f"{base}/api/v1/entities/demo-desktop/days", headers={"Authorization": f"Bearer {token}"}
    )
    deadline = time.monotonic() + 180
    while json.loads(urllib.request.urlopen(days, timeout=10).read())["pending_days"]:
        assert time.monotonic() < deadline, "the worker did not compile the demo's days"
        time.sleep(1)
    try:
        yield folder, env, base
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


# Fails the block on an HTTP error (the README's curl calls use -s, which hides them); a
# 304 Not Modified is not an error.
CURL = """
curl() { command curl --fail-with-body "$@"; }
set -euo pipefail
"""


def test_readme_has_runnable_examples_in_every_api_section() -> None:
    headings = {heading for heading, _ in blocks("sh") + blocks("bash")}
    assert headings == set(SECTIONS)


def test_the_shell_examples_run_against_the_demo(demo) -> None:
    folder, env, base = demo
    token = (folder / "var" / "demo_token").read_text().strip()
    for heading, code in blocks("sh") + blocks("bash"):
        script = CURL + code.replace("http://127.0.0.1:8000", base)
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=folder,
            env={**env, "TOKEN": token, "AFRAMES_URL": base},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{heading}:\n{code}\n--- stdout\n{done.stdout[-3000:]}\n" + (
            f"--- stderr\n{done.stderr[-3000:]}"
        )
        if "evidence?ids=" in code:  # an example that answers: the frame's rows, none missing
            assert '"missing":[]' in done.stdout.replace(" ", ""), done.stdout[-2000:]


def test_the_python_examples_run_against_the_demo(demo) -> None:
    folder, env, base = demo
    examples = blocks("python")
    assert examples, "the MCP section shows a Python client"
    for heading, code in examples:
        done = subprocess.run(
            [sys.executable, "-c", code.replace("http://127.0.0.1:8000", base)],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{heading}:\n{code}\n{done.stderr[-3000:]}"
        assert done.stdout.strip(), heading


def test_the_demo_has_a_benchmark_run_to_show(demo) -> None:
    folder, _, base = demo
    token = (folder / "var" / "demo_token").read_text().strip()
    request = urllib.request.Request(
        f"{base}/api/v1/benchmark/runs/1", headers={"Authorization": f"Bearer {token}"}
    )
    run = json.loads(urllib.request.urlopen(request, timeout=10).read())
    assert run["status"] == "done"
    assert set(run["results"]["scopes"]["home"]) == {"proactmem", "event_only"}
    assert run["results"]["threshold_curve"]["home"]
