"""Response headers a careful attacker looks for: a Content-Security-Policy on every page, and
Strict-Transport-Security on HTTPS behind a TLS proxy (settings: CONTENT_SECURITY_POLICY,
AFRAMES_HSTS_SECONDS)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_env import settings_process

ROOT = Path(__file__).resolve().parent.parent
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>\s*\S", re.IGNORECASE)
STATIC = "/static/vendor/htmx-2.0.11/htmx.min.js"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/login/", "/api/docs/", "/api/schema/"])
def test_pages_carry_a_policy_that_allows_only_our_own_scripts(client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200, path
    policy = response.headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    assert directives["script-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["object-src"] == "'none'"
    # The policy forbids inline scripts, so a page that had one would be broken.
    assert not INLINE_SCRIPT.search(response.content.decode()), path


def test_the_api_docs_load_their_start_up_script_from_a_file(client) -> None:
    page = client.get("/api/docs/").content.decode()
    scripts = re.findall(r'<script[^>]*\bsrc="([^"]+)"', page)
    assert any("swagger-ui" in src for src in scripts)
    started = [src for src in scripts if "script=" in src or src.startswith("/api/docs/")]
    assert started, scripts
    response = client.get(started[0])
    assert response.status_code == 200
    assert "SwaggerUIBundle" in response.content.decode()


def _hsts(env: dict[str, str], tmp_path: Path, *, https: bool) -> str:
    program = (
        "import django; django.setup(); from django.test import Client; "
        f"r = Client().get({STATIC!r}, headers={{'X-Forwarded-Proto': "
        f"{'https' if https else 'http'!r}}}); "
        "print(r.status_code, r.headers.get('Strict-Transport-Security', '-'))"
    )
    done = settings_process({"ALLOWED_HOSTS": "testserver", **env}, tmp_path, program)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_hsts_is_sent_over_https_behind_a_tls_proxy_and_never_over_http(tmp_path: Path) -> None:
    proxy = {"TRUST_X_FORWARDED_PROTO": "1"}
    assert _hsts(proxy, tmp_path, https=True) == "200 max-age=31536000"
    assert _hsts(proxy, tmp_path, https=False) == "200 -"
    assert _hsts({**proxy, "AFRAMES_HSTS_SECONDS": "600"}, tmp_path, https=True) == (
        "200 max-age=600"
    )
    # Without a proxy Django never sees HTTPS here, and nothing is asked for.
    assert _hsts({}, tmp_path, https=True) == "200 -"
