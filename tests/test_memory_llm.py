"""The optional LLM client (memory/llm.py) and the llm policy through the service.

The model is the outside world: a small OpenAI-compatible HTTP server in this process answers,
over a real socket, the way a model server would (STYLE.md allows a fake only for it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from aframes_web.streams.services import entity_create
from memory import llm
from memory.models import Decision, LlmCall, Trajectory
from memory.services.deciding import decide_batch, memory_decide
from tests.home_streams import START, motion, routine_day

pytestmark = pytest.mark.django_db(transaction=True)


class FakeModel:
    """Answers the pre-screen with escalate and the decision with an intervention citing the
    current event, or with what ``status`` / ``reply`` force."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.reply: str | None = None

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append(body)
        if self.status != 200:
            return self.status, {"error": "overloaded"}
        prompt = body["messages"][0]["content"]
        context = json.loads(prompt.split("\n", 1)[1])
        if self.reply is not None:
            text = self.reply
        elif prompt.startswith("You read one day"):
            text = json.dumps({"segments": _proposals(context["events"][0])})
        elif prompt.startswith("You screen"):
            text = json.dumps({"screen": "escalate"})
        else:
            text = json.dumps(
                {
                    "decision": "intervene",
                    "intent": "check_in_routine",
                    "message": "Good morning: breakfast?",
                    "evidence": [context["current"]["id"]],
                }
            )
        usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": 12}
        return 200, {"choices": [{"message": {"content": text}}], "usage": usage}


def _proposals(first: dict[str, Any]) -> list[dict[str, Any]]:
    """One segment the first event grounds and one it does not."""
    room = first["payload"]["attributes"]["room"]

    def segment(value: str) -> dict[str, Any]:
        return {
            "kind": "wake_up",
            "start": first["at"],
            "end": first["at"],
            "citations": [first["id"]],
            "facts": [{"id": "f1", "type": "observed", "path": ["room"], "value": value}],
        }

    return [segment(room), segment("garage")]


@pytest.fixture
def model(settings: Any) -> Iterator[FakeModel]:
    fake = FakeModel()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            length = int(self.headers["Content-Length"])
            status, body = fake.answer(json.loads(self.rfile.read(length)))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.LLM_BASE_URL = f"http://127.0.0.1:{server.server_address[1]}/v1"
    settings.LLM_MODEL = "tiny-test-model"
    settings.LLM_API_KEY = "sk-test"
    yield fake
    server.shutdown()


@pytest.fixture
def home(team: Any) -> Any:
    return entity_create(team=team, key="flat-1", scope="home", timezone_name="Europe/Paris")


def test_without_a_model_the_llm_policy_is_refused_with_what_to_set(home, settings) -> None:
    settings.LLM_BASE_URL = ""
    with pytest.raises(ValueError, match="LLM_BASE_URL"):
        memory_decide(entity=home, item=motion(START, 7, 0, "bedroom"), policy="llm")
    with pytest.raises(llm.LlmUnavailable, match="no LLM is configured"):
        llm.complete("hello")


def test_llm_policy_decides_through_the_recorded_client(home, model) -> None:
    result = memory_decide(entity=home, item=motion(START, 7, 0, "bedroom"), policy="llm")
    decision = result.decision
    assert decision.policy == "llm" and decision.action == "intervene"
    assert decision.intent == "check_in_routine"
    assert decision.evidence == [f"event:{decision.event_id}"]
    assert [r["temperature"] for r in model.requests] == [0, 0]
    assert "secret-label" not in json.dumps(model.requests)  # ground truth never leaves
    calls = LlmCall.objects.order_by("created_at")
    assert [c.ok for c in calls] == [True, True]
    assert all(c.prompt_tokens and c.latency_ms >= 0 for c in calls)


def test_the_same_prompt_is_served_from_the_record_not_asked_again(model, settings) -> None:
    first = llm.complete("You screen events\n{}")
    asked = len(model.requests)
    assert llm.complete("You screen events\n{}") == first
    assert len(model.requests) == asked == 1
    assert LlmCall.objects.count() == 1


@pytest.mark.parametrize(
    ("status", "reply", "reason"),
    [
        (503, None, "the call failed"),
        (200, "I think you should go for a walk", "not JSON"),
        (200, '{"screen": "maybe"}', "unknown answer"),
    ],
)
def test_any_failure_of_the_model_abstains_and_is_recorded(
    home, model, status, reply, reason
) -> None:
    model.status, model.reply = status, reply
    decision = memory_decide(
        entity=home, item=motion(START, 7, 0, "bedroom"), policy="llm"
    ).decision
    assert decision.action == "abstain" and reason in decision.message
    assert Decision.objects.count() == 1
    if status != 200:
        failed = LlmCall.objects.get()
        assert not failed.ok and "503" in failed.error
        # A failure is never served from the record: the next ask goes to the model again.
        model.status = 200
        llm.complete(failed.prompt, entity=failed.entity)
        assert LlmCall.objects.filter(ok=True).count() == 1


def test_the_llm_extractor_adds_segments_at_day_close_and_validation_still_rules(
    home, model, settings
) -> None:
    settings.AFRAMES_MEMORY_LLM_EXTRACTOR = True
    decide_batch(entity=home, items=routine_day(START) + routine_day(START + timedelta(days=1)))
    day = Trajectory.objects.get(entity=home, day=START)
    assert day.extractor == "deterministic+llm"
    proposed = {s.facts.get().value: s for s in day.segments.filter(source="llm")}
    assert proposed["bedroom"].accepted and proposed["bedroom"].kind == "wake_up"
    assert not proposed["garage"].accepted
    assert "grounded by no cited event" in proposed["garage"].reason
    assert day.segments.filter(source="").exists()  # the deterministic segments stay
    # The open day a decision reads never calls the model: one extraction call per closed day.
    extraction = [r for r in model.requests if r["messages"][0]["content"].startswith("You read")]
    assert len(extraction) == Trajectory.objects.filter(entity=home).count() == 1


def test_a_failure_tells_the_client_its_kind_and_keeps_the_endpoint_for_operators(
    home, model, settings
) -> None:
    model.status = 401
    decision = memory_decide(
        entity=home, item=motion(START, 7, 0, "bedroom"), policy="llm"
    ).decision
    assert decision.action == "abstain"
    assert "HTTP 401" in decision.message
    assert "127.0.0.1" not in decision.message and "/v1" not in decision.message
    failed = LlmCall.objects.get()
    assert settings.LLM_BASE_URL in failed.error and "401" in failed.error


def test_each_team_spends_at_most_its_hourly_budget_and_the_record_stays_free(
    home, model, settings
) -> None:
    settings.AFRAMES_LLM_CALLS_PER_HOUR = 2
    first = llm.complete("You screen events\n{}", entity=home)
    llm.complete('You screen events\n{"a": 1}', entity=home)
    with pytest.raises(llm.LlmUnavailable, match="budget of 2 calls an hour is spent"):
        llm.complete('You screen events\n{"b": 2}', entity=home)
    assert len(model.requests) == 2
    assert llm.complete("You screen events\n{}", entity=home) == first  # from the record
    # Another team's budget is its own.
    from aframes_web.teams.services import team_create

    other = entity_create(
        team=team_create(slug="other", name="Other"), key="h", scope="home", timezone_name="UTC"
    )
    llm.complete('You screen events\n{"b": 2}', entity=other)
    assert len(model.requests) == 3
    # A request deciding many events through the llm policy stops calling at the budget.
    LlmCall.objects.all().delete()
    model.requests.clear()
    items = [motion(START, 7, minute, "bedroom") for minute in range(6)]
    decisions = decide_batch(entity=home, items=items, policy="llm")
    assert len(model.requests) <= 2
    assert any("budget" in d.decision.message for d in decisions)


def test_a_redirect_is_not_followed_so_the_key_stays_with_the_endpoint(home, settings) -> None:
    seen: list[str | None] = []

    class Elsewhere(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    other = ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)

    class Redirecting(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(307)
            self.send_header("Location", f"http://127.0.0.1:{other.server_address[1]}/steal")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    for s in (server, other):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        settings.LLM_BASE_URL = f"http://127.0.0.1:{server.server_address[1]}/v1"
        settings.LLM_MODEL, settings.LLM_API_KEY = "tiny-test-model", "sk-secret"
        with pytest.raises(llm.LlmUnavailable, match="answered HTTP 307"):
            llm.complete("hello", entity=home)
        assert seen == []
        assert "/steal" in LlmCall.objects.get().error
    finally:
        server.shutdown()
        other.shutdown()
