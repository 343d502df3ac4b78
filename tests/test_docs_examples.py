"""The documentation's examples, run as written against the demo that `make run` loads, and
the site built as CI builds it.

A fresh database gets `migrate` and `load_demo`; `manage.py serve` serves it; then the shell
blocks of every page in `docs/` that call the server run in bash with the variables the docs tell
a reader to set (`TOKEN`, `AFRAMES_URL`), in a folder laid out as a checkout is
(`var/demo_token`). The tutorial's blocks run whole and in order, as one script, because each
step uses what the one before made. A failing request fails the test: `curl` is wrapped to fail
on HTTP errors. The only change made to a block is the port: the server runs on a free one.
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
DOCS = ROOT / "docs"
README = ROOT / "README.md"
# Pages whose every shell block runs, in order, as one script: a walk-through.
WHOLE = ("tutorial.md",)
# The pages that show requests to the server; each must keep a runnable one.
API_PAGES = {
    "README.md",
    "tutorial.md",
    "reference/rest.md",
    "explanation/compiled-days.md",
    "how-to/routines.md",
    "explanation/proactmem.md",
    "explanation/benchmark.md",
    "how-to/label.md",
    "how-to/mcp-clients.md",
}
# Blocks that need what a test cannot have: another machine's tools, a reader's own values, or
# the server the test already runs.
NOT_RUNNABLE = (
    "claude mcp add",
    "docker compose",
    "/path/to/",
    "afr_...",
    "aframes-sync",
    "make run",
)


def blocks(language: str) -> list[tuple[str, str]]:
    """(page, code) of every runnable block in ``language``: the README's, then the docs' in
    name order; a page of
    WHOLE comes back as one block of all its shell code."""
    fence = re.compile(rf"```{language}\n(.*?)```", re.S)
    picked = []
    for path in [README, *sorted(DOCS.rglob("*.md"))]:
        page = "README.md" if path == README else path.relative_to(DOCS).as_posix()
        codes = [m.group(1) for m in fence.finditer(path.read_text())]
        codes = [c for c in codes if not any(marker in c for marker in NOT_RUNNABLE)]
        if page in WHOLE and language in ("sh", "bash"):
            picked += [(page, "\n".join(codes))] if codes else []
            continue
        picked += [(page, c) for c in codes if language == "python" or "curl" in c]
    return picked


# A documented answer: comment lines of a block that start with `# {` and those that follow it.
ANSWER = re.compile(r"^# \{.*(?:\n#  .*)*", re.M)
PAIR = re.compile(r'"(\w+)": ("[^"]*"|true|false|null|-?\d+)')


def documented_pairs(code: str) -> list[str]:
    """Each `"key": value` of a documented answer, spelled as the server writes it (no space),
    except ids and timings, which differ from one demo or machine to another."""
    pairs = []
    for answer in ANSWER.findall(code):
        for name, value in PAIR.findall(answer):
            if name != "id" and not name.endswith(("_id", "_ms", "_at")):
                pairs.append(f'"{name}":{value}')
    return pairs


def test_documented_answers_are_read_as_the_server_writes_them() -> None:
    code = '# {"id": 3, "event_id": 9, "action": "abstain", "evidence": [],\n#  "duplicate": false}'
    assert documented_pairs(code) == ['"action":"abstain"', '"duplicate":false']


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


def test_every_api_page_has_runnable_examples() -> None:
    pages = {page for page, _ in blocks("sh") + blocks("bash")}
    assert pages == API_PAGES


def test_the_shell_examples_run_against_the_demo(demo) -> None:
    folder, env, base = demo
    token = (folder / "var" / "demo_token").read_text().strip()
    for page, code in blocks("sh") + blocks("bash"):
        script = CURL + code.replace("http://127.0.0.1:8000", base)
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=folder,
            env={**env, "TOKEN": token, "AFRAMES_URL": base},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{page}:\n{code}\n--- stdout\n{done.stdout[-3000:]}\n" + (
            f"--- stderr\n{done.stderr[-3000:]}"
        )
        for pair in documented_pairs(code):
            assert pair in done.stdout, f"{page}: the documented answer says {pair}, not seen"
        if "evidence?ids=" in code:  # an example that answers: the frame's rows, none missing
            assert '"missing":[]' in done.stdout.replace(" ", ""), done.stdout[-2000:]


def test_the_python_examples_run_against_the_demo(demo) -> None:
    folder, env, base = demo
    examples = blocks("python")
    assert examples, "the MCP how-to shows a Python client"
    for page, code in examples:
        done = subprocess.run(
            [sys.executable, "-c", code.replace("http://127.0.0.1:8000", base)],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{page}:\n{code}\n{done.stderr[-3000:]}"
        assert done.stdout.strip(), page


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


def test_the_site_builds_strictly_with_every_internal_link_resolved(tmp_path: Path) -> None:
    """`make docs`: MkDocs with --strict fails on any warning, a link to a missing page or
    anchor included (`validation` in mkdocs.yml), and the generated reference pages build."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    generated = {
        "reference/rest-endpoints": "/api/v1/entities/{key}/decide",
        "reference/mcp-tools": "get_context",
        "reference/commands": "memory_close",
    }
    for page, named in generated.items():
        assert named in (tmp_path / page / "index.html").read_text(), page
    commands = (tmp_path / "reference/commands/index.html").read_text()
    for source in ROOT.glob("*/**/management/commands/[a-z]*.py"):
        if ".venv" not in source.parts:
            assert f"manage.py {source.stem}" in commands, f"{source.stem} is not documented"


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for path in DOCS.rglob("*.md"):
        assert path.relative_to(DOCS).as_posix() in nav, f"{path} is not in mkdocs.yml's nav"


def test_the_readme_is_short_starts_with_the_two_commands_and_links_to_real_pages() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    first_block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert first_block and text.index("```sh") < text.index("\n## ")
    assert [line.split()[:2] for line in first_block.group(1).strip().splitlines()] == [
        ["make", "run"],
        ["make", "test"],
    ]
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert local, "the README points to the docs"
    for link in local:
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"
