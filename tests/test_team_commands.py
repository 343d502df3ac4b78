from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from aframes_web.teams.models import ApiToken, Membership, Team
from aframes_web.teams.services import hash_key

pytestmark = pytest.mark.django_db


def _call(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_team_add_member_and_token_end_to_end() -> None:
    assert "Created team 'lab'" in _call("create_team", "lab", "--name", "The Lab")
    assert "ada is annotator of lab" in _call(
        "add_member", "lab", "ada", "annotator", "--password", "pw-123456"
    )
    key = _call("create_token", "lab", "ingest", "--scopes", "write,read", "--quiet").strip()
    token = ApiToken.objects.get(name="ingest")
    assert token.scopes == ["read", "write"]
    # Only the hash is stored; the key itself is nowhere in the row.
    assert token.key_hash == hash_key(key) and key not in str(token.__dict__.values())
    assert Membership.objects.get(user__username="ada").team == Team.objects.get(slug="lab")


def test_command_errors_are_clear() -> None:
    _call("create_team", "lab")
    with pytest.raises(CommandError, match="already exists"):
        _call("create_team", "lab")
    with pytest.raises(CommandError, match="not valid"):
        _call("create_team", "Bad Slug")
    with pytest.raises(CommandError, match="unknown scope"):
        _call("create_token", "lab", "x", "--scopes", "read,root")
    with pytest.raises(CommandError, match="No team 'nope'"):
        _call("add_member", "nope", "ada", "viewer")
    _call("create_token", "lab", "x")
    with pytest.raises(CommandError, match="already has a token named 'x'"):
        _call("create_token", "lab", "x")


def test_revoke_token_command() -> None:
    _call("create_team", "lab")
    _call("create_token", "lab", "ci")
    assert "Revoked" in _call("revoke_token", "lab", "ci")
    assert ApiToken.objects.get(name="ci").revoked_at is not None


def test_add_member_refuses_a_weak_password_and_creates_nobody() -> None:
    from django.contrib.auth import get_user_model

    _call("create_team", "weak", "--name", "Weak")
    for weak in ("a", "12345678", "password1"):
        with pytest.raises(CommandError, match="The password is refused"):
            _call("add_member", "weak", "bob", "viewer", "--password", weak)
    assert not get_user_model().objects.filter(username="bob").exists()


def test_repeated_failed_sign_ins_lock_the_account_for_that_address(team, owner) -> None:
    from django.test import Client

    client = Client()
    for _ in range(5):
        wrong = client.post("/login/", {"username": "olivia", "password": "not-it"})
        assert wrong.status_code in (200, 429)
    locked = client.post("/login/", {"username": "olivia", "password": "owner-pass-1"})
    assert locked.status_code == 429 and b"Sign-in paused" in locked.content
    assert "_auth_user_id" not in client.session
    # The same account from another address still signs in.
    other = Client(REMOTE_ADDR="10.9.9.9")
    fine = other.post("/login/", {"username": "olivia", "password": "owner-pass-1"})
    assert fine.status_code == 302
