from __future__ import annotations

import pytest
from django.test import Client

from aframes_web.streams.services import entity_create

pytestmark = pytest.mark.django_db


def test_owner_token_creates_and_lists_entities(owner_api) -> None:
    created = owner_api.post(
        "/api/v1/entities", {"key": "alice", "scope": "desktop", "timezone": "Europe/Paris"}
    )
    assert created.status_code == 201, created.json()
    assert created.json()["timezone"] == "Europe/Paris"
    listed = owner_api.get("/api/v1/entities").json()["results"]
    assert [e["key"] for e in listed] == ["alice"]


def test_create_rejects_bad_timezone_scope_key_and_duplicates(owner_api) -> None:
    bad_tz = owner_api.post(
        "/api/v1/entities", {"key": "a", "scope": "desktop", "timezone": "Mars/Olympus"}
    )
    assert bad_tz.status_code == 400 and "IANA" in bad_tz.json()["detail"]
    bad_scope = owner_api.post("/api/v1/entities", {"key": "a", "scope": "garden"})
    assert bad_scope.status_code == 400 and "scope" in bad_scope.json()["fields"]
    bad_key = owner_api.post("/api/v1/entities", {"key": "a b/c", "scope": "home"})
    assert bad_key.status_code == 400 and "not a valid key" in bad_key.json()["detail"]
    # Python's `$` matches before a final newline; the key pattern (and JSON Schema's) does not.
    newline = owner_api.post("/api/v1/entities", {"key": "a\n", "scope": "home"})
    assert newline.status_code == 400 and "not a valid key" in newline.json()["detail"]
    # A number is not a key: it is refused, not turned into the text of its spelling.
    for value, said in ((6.5e-111, "a number"), (12, "a number"), (True, "true or false")):
        number = owner_api.post("/api/v1/entities", {"key": value, "scope": "home"}, format="json")
        assert number.status_code == 400
        assert f"must be a JSON string, not {said}" in number.json()["fields"]["key"][0]
    named = owner_api.post(
        "/api/v1/entities", {"key": "n", "scope": "home", "name": ["x"]}, format="json"
    )
    assert named.status_code == 400 and "not an array" in named.json()["fields"]["name"][0]
    owner_api.post("/api/v1/entities", {"key": "a", "scope": "home"})
    again = owner_api.post("/api/v1/entities", {"key": "a", "scope": "home"})
    assert again.status_code == 409


def test_read_token_cannot_create(reader_api) -> None:
    denied = reader_api.post("/api/v1/entities", {"key": "x", "scope": "home"})
    assert denied.status_code == 403
    assert "'write' scope" in denied.json()["detail"]


def test_missing_malformed_and_revoked_tokens_are_refused(team, make_client) -> None:
    from aframes_web.teams.models import ApiToken
    from aframes_web.teams.services import token_revoke

    assert Client().get("/api/v1/entities").status_code == 401
    bad = Client().get("/api/v1/entities", headers={"Authorization": "Bearer afr_nope_x"})
    assert bad.status_code == 401 and "unknown or has been revoked" in bad.json()["detail"]
    api = make_client(team, ["read"], "soon-revoked")
    assert api.get("/api/v1/entities").status_code == 200
    token_revoke(token=ApiToken.objects.get(name="soon-revoked"))
    assert api.get("/api/v1/entities").status_code == 401


def test_outsider_token_never_sees_another_teams_entities(team, owner_api, outsider_api) -> None:
    entity_create(team=team, key="secret-box", scope="home")
    assert outsider_api.get("/api/v1/entities").json()["results"] == []
    missing = outsider_api.get("/api/v1/entities/secret-box")
    never_existed = outsider_api.get("/api/v1/entities/nothing-here")
    assert missing.status_code == never_existed.status_code == 404
    assert missing.json()["detail"].replace("secret-box", "K") == never_existed.json()[
        "detail"
    ].replace("nothing-here", "K")
    assert owner_api.get("/api/v1/entities/secret-box").status_code == 200


def test_session_users_act_for_their_team_by_role(team, owner, member, outsider) -> None:
    entity_create(team=team, key="box", scope="home")
    clients = {}
    for user in (owner, member, outsider):
        clients[user.username] = Client()
        clients[user.username].force_login(user)
    seen = {
        name: [e["key"] for e in c.get("/api/v1/entities").json()["results"]]
        for name, c in clients.items()
    }
    assert seen == {"olivia": ["box"], "mia": ["box"], "oscar": []}
    made = {
        name: c.post(
            "/api/v1/entities",
            {"key": f"n-{name}", "scope": "home"},
            content_type="application/json",
        ).status_code
        for name, c in clients.items()
    }
    # The viewer may read but not write; the outsider writes only into its own team.
    assert made == {"olivia": 201, "mia": 403, "oscar": 201}
    assert [e["key"] for e in clients["mia"].get("/api/v1/entities").json()["results"]] == [
        "box",
        "n-olivia",
    ]


def test_token_last_used_is_recorded(team, make_client) -> None:
    from aframes_web.teams.models import ApiToken

    api = make_client(team, ["read"], "tracked")
    assert ApiToken.objects.get(name="tracked").last_used_at is None
    api.get("/api/v1/entities")
    assert ApiToken.objects.get(name="tracked").last_used_at is not None


def test_session_user_of_several_teams_names_the_team(team, other_team, owner) -> None:
    from aframes_web.teams.models import Role
    from aframes_web.teams.services import member_add, user_get_or_create

    entity_create(team=other_team, key="g-box", scope="home")
    member_add(team=other_team, user=owner, role=Role.VIEWER)
    client = Client()
    client.force_login(owner)
    ambiguous = client.get("/api/v1/entities")
    assert ambiguous.status_code == 400 and "?team=<slug>" in str(ambiguous.json())
    named = client.get("/api/v1/entities", {"team": "globex"}).json()["results"]
    assert [e["key"] for e in named] == ["g-box"]
    assert client.get("/api/v1/entities", {"team": "initech"}).status_code == 404
    loner = user_get_or_create(username="lone", password="pw-1234567")
    client.force_login(loner)
    assert client.get("/api/v1/entities").status_code == 403
