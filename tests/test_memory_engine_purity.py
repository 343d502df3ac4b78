"""memory/engine is pure: no Django, no network, no I/O libraries (STYLE.md: pure cores)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BANNED = {
    "django",
    "rest_framework",
    "celery",
    "aframes_web",
    "requests",
    "urllib",
    "urllib3",
    "httpx",
    "socket",
    "sqlite3",
    "psycopg",
    "subprocess",
}


def test_the_engine_imports_nothing_impure() -> None:
    files = list((ROOT / "memory" / "engine").rglob("*.py"))
    assert files
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in BANNED, f"{path}: imports {name}"
