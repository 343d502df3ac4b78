"""Decision policies and the service catalogue: every rule by name, on small hand-made data."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from memory.engine.catalogue import (
    CATALOGUE,
    activity_family,
    control_context,
    episode,
    services,
)
from memory.engine.control import Proposed, Scope, signature
from memory.engine.decide import (
    ABSTAIN,
    EVENT_ONLY_LOOKBACK,
    NEAR_DEADLINE,
    POLICIES,
    DecisionContext,
    EventOnlyPolicy,
    LlmPolicy,
    RulesPolicy,
    policy,
    prompt_context,
)
from memory.engine.records import DayRecord, EngineEvent, Observation, Predicate, Proposal
from memory.engine.refs import regularity_id
from memory.engine.retrieve import Occurrence, Retrieved

TZ = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 3, 2)
WALK = Proposal(
    Predicate(("decision_point", "available"), True),
    Predicate(("step_bout", "type"), "steps"),
    (time(9), time(10)),
)
SEDENTARY = Proposal(WALK.trigger, Predicate(("sedentary", "type"), "steps"), (time(9), time(10)))
RID = regularity_id(WALK)
TRIGGER_FACT = "fact:2026-03-02/0/f1"


def at(hhmm: str) -> datetime:
    h, m = map(int, hhmm.split(":"))
    return datetime(MONDAY.year, MONDAY.month, MONDAY.day, h, m, tzinfo=TZ)


def obs(n: int, hhmm: str, type_: str, **attributes: Any) -> EngineEvent:
    payload = {"type": type_, "value": attributes.pop("value", None), "attributes": attributes}
    return EngineEvent(n, at(hhmm), "observation", payload)


def decision_point(n: int = 10, hhmm: str = "09:45", **attributes: Any) -> EngineEvent:
    flags = {"available": True, "in_transit": False, "snoozed": False, **attributes}
    return obs(n, hhmm, "decision_point", value=0, **flags)


def snapshot(n: int, hhmm: str, app: str = "Code", url: str | None = None) -> EngineEvent:
    payload = {"app": app, "window": "w", "url": url, "focused": True}
    return EngineEvent(n, at(hhmm), "snapshot", payload)


def retrieved(
    occurrence: Occurrence, deadline: str = "10:00", proposal: Proposal = WALK
) -> Retrieved:
    facts = () if occurrence == "upcoming" else (TRIGGER_FACT,)
    return Retrieved(
        key="k",
        proposal=proposal,
        state="active",
        confidence=0.8,
        occurrence=occurrence,
        distance=timedelta(0),
        deadline=at(deadline),
        fact_ids=facts,
    )


def ctx(
    current: EngineEvent,
    *regularities: Retrieved,
    scope: Scope = "sports",
    prior: tuple[EngineEvent, ...] = (),
    now: str | None = None,
) -> DecisionContext:
    today = DayRecord(MONDAY, (Observation(at("09:10"), WALK.trigger.path, True, TRIGGER_FACT),))
    return DecisionContext(
        scope=scope,
        current=current,
        recent=(*prior, current),
        now=at(now) if now else current.at.astimezone(TZ),
        trajectories=(),
        today=today,
        regularities=regularities,
    )


# -- rules --------------------------------------------------------------------------------------


def test_near_deadline_is_half_an_hour() -> None:
    assert timedelta(minutes=30) == NEAR_DEADLINE


def test_rules_intervenes_on_a_deviated_regularity_and_cites_event_fact_and_regularity() -> None:
    got = RulesPolicy().decide(ctx(decision_point(hhmm="10:15"), retrieved("deviated")))
    assert (got.action, got.intent, got.episode) == ("intervene", "suggest_walk", "2026-03-02")
    assert got.regularity_ids == (RID,)
    assert got.evidence_ids == ("event:10", TRIGGER_FACT, RID)
    # The message says the routine and today's deviation in words, with no internal encoding.
    assert got.message.endswith(
        "Usually a walk by 10:00 after a decision point while available; none yet today at 10:15."
    )
    counted = replace(retrieved("deviated"), n_f=9, n_v=2)
    worded = RulesPolicy().decide(ctx(decision_point(hhmm="10:15"), counted)).message
    assert "(9 of the last 11 times); none yet today at 10:15." in worded


def test_rules_intervenes_on_pending_near_the_deadline() -> None:
    got = RulesPolicy().decide(ctx(decision_point(hhmm="09:30"), retrieved("pending")))
    assert got.action == "intervene"


def test_rules_abstains_on_pending_far_from_the_deadline() -> None:
    got = RulesPolicy().decide(ctx(decision_point(hhmm="09:29"), retrieved("pending")))
    assert (got.action, got.intent) == ("abstain", ABSTAIN)
    assert "not due" in got.message


def test_rules_abstains_on_upcoming() -> None:
    assert RulesPolicy().decide(
        ctx(decision_point(hhmm="08:45"), retrieved("upcoming"))
    ).action == ("abstain")


def test_rules_abstains_without_regularities() -> None:
    got = RulesPolicy().decide(ctx(decision_point()))
    assert (got.action, got.message) == ("abstain", "no regularity bears on now")


def test_rules_abstains_when_no_service_applies() -> None:
    got = RulesPolicy().decide(ctx(decision_point(), retrieved("deviated", proposal=SEDENTARY)))
    assert got.action == "abstain"
    assert "no service applies" in got.message


@pytest.mark.parametrize(
    "flags", [{"available": False}, {"in_transit": True}, {"snoozed": True}, {"available": None}]
)
def test_rules_abstains_when_the_event_is_no_moment_to_act(flags: dict[str, Any]) -> None:
    got = RulesPolicy().decide(ctx(decision_point(**flags), retrieved("deviated")))
    assert got.action == "abstain"
    assert "no moment to act" in got.message


def test_rules_walks_regularities_in_rank_order() -> None:
    got = RulesPolicy().decide(
        ctx(decision_point(), retrieved("deviated", proposal=SEDENTARY), retrieved("deviated"))
    )
    assert got.regularity_ids == (RID,)


# -- event only ---------------------------------------------------------------------------------


def test_event_only_ignores_memory() -> None:
    current = decision_point()
    assert EventOnlyPolicy().decide(ctx(current)) == EventOnlyPolicy().decide(
        ctx(current, retrieved("deviated"), retrieved("pending"))
    )
    got = EventOnlyPolicy().decide(ctx(current, retrieved("deviated")))
    assert (got.action, got.regularity_ids, got.evidence_ids) == ("intervene", (), ("event:10",))


def test_event_only_sports_abstains_after_recent_steps() -> None:
    steps = obs(5, "09:00", "steps", value=120)
    assert EventOnlyPolicy().decide(ctx(decision_point(), prior=(steps,))).action == "abstain"
    old = obs(5, "08:40", "steps", value=120)  # more than an hour before 09:45
    assert timedelta(hours=1) == EVENT_ONLY_LOOKBACK
    assert EventOnlyPolicy().decide(ctx(decision_point(), prior=(old,))).action == "intervene"
    zero = obs(5, "09:00", "steps", value=0)
    assert EventOnlyPolicy().decide(ctx(decision_point(), prior=(zero,))).action == "intervene"


def test_event_only_abstains_when_no_service_is_actionable() -> None:
    assert EventOnlyPolicy().decide(ctx(decision_point(available=False))).action == "abstain"


def test_event_only_home_needs_an_hour_of_stillness() -> None:
    current = obs(9, "07:00", "motion", value="ON", sensor="M001", room="Kitchen")
    got = EventOnlyPolicy().decide(ctx(current, scope="home"))
    assert (got.intent, got.episode) == ("check_in_routine", "2026-03-02/meal")
    earlier = obs(8, "06:30", "motion", value="ON", sensor="M002")
    assert (
        EventOnlyPolicy().decide(ctx(current, scope="home", prior=(earlier,))).action == "abstain"
    )


def test_event_only_code_first_touch_of_an_object() -> None:
    current = obs(9, "10:00", "PullRequestEvent", action="opened", number=7, state="open")
    got = EventOnlyPolicy().decide(ctx(current, scope="code"))
    assert (got.intent, got.episode) == ("review_nudge", "pull_request:7")
    touched = obs(8, "09:30", "IssueCommentEvent", number=7, pull_request=True, action="created")
    assert (
        EventOnlyPolicy().decide(ctx(current, scope="code", prior=(touched,))).action == "abstain"
    )


def test_event_only_desktop_return_to_an_app() -> None:
    got = EventOnlyPolicy().decide(ctx(snapshot(9, "10:00"), scope="desktop"))
    assert (got.intent, got.episode) == ("resume_focus", "2026-03-02/Code")
    prior = (snapshot(8, "09:50"),)
    assert EventOnlyPolicy().decide(
        ctx(snapshot(9, "10:00"), scope="desktop", prior=prior)
    ).action == ("abstain")


# -- llm ----------------------------------------------------------------------------------------


def fake(*replies: str | Exception) -> tuple[Callable[[str], str], list[str]]:
    prompts: list[str] = []
    queue = list(replies)

    def complete(prompt: str) -> str:
        prompts.append(prompt)
        reply = queue.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    return complete, prompts


ESCALATE = json.dumps({"screen": "escalate"})


def good(**overrides: Any) -> str:
    reply = {
        "decision": "intervene",
        "intent": "suggest_walk",
        "message": "Time for a walk?",
        "evidence": ["event:10", TRIGGER_FACT, RID],
    }
    return json.dumps({**reply, **overrides})


def test_llm_accepts_a_good_reply() -> None:
    complete, prompts = fake(ESCALATE, good())
    got = LlmPolicy(complete).decide(ctx(decision_point(), retrieved("deviated")))
    assert got == Proposed(
        "intervene",
        "suggest_walk",
        "2026-03-02",
        regularity_ids=(RID,),
        message="Time for a walk?",
        evidence_ids=("event:10", TRIGGER_FACT, RID),
    )
    assert len(prompts) == 2 and prompts[0] != prompts[1]


def test_llm_prompt_is_deterministic_and_lists_what_may_be_cited() -> None:
    c = ctx(decision_point(), retrieved("deviated"), prior=(obs(3, "09:00", "steps", value=0),))
    assert prompt_context(c) == prompt_context(c)
    assert prompt_context(c)["citable"] == sorted(["event:3", "event:10", TRIGGER_FACT, RID])


def test_llm_prompt_leaves_private_out() -> None:
    current = EngineEvent(10, at("09:45"), "observation", {"type": "motion", "private": {"a": 1}})
    assert "private" not in json.dumps(prompt_context(ctx(current, scope="home")))


def test_llm_skip_abstains_without_a_second_call() -> None:
    complete, prompts = fake(json.dumps({"screen": "skip"}))
    got = LlmPolicy(complete).decide(ctx(decision_point()))
    assert (got.action, got.message, len(prompts)) == ("abstain", "llm pre-screen: skip", 1)


def test_llm_abstain_reply_is_an_abstention() -> None:
    complete, _ = fake(ESCALATE, good(decision="abstain", intent="", message="busy", evidence=[]))
    got = LlmPolicy(complete).decide(ctx(decision_point()))
    assert (got.action, got.message) == ("abstain", "llm: busy")


@pytest.mark.parametrize(
    ("replies", "reason"),
    [
        ((RuntimeError("down"),), "the call failed (RuntimeError: down)"),
        (("not json",), "pre-screen: the reply is not JSON"),
        ((json.dumps({"screen": "maybe"}),), "unknown answer 'maybe'"),
        ((json.dumps(["escalate"]),), "not an object"),
        ((ESCALATE, TimeoutError("slow")), "llm decision: the call failed (TimeoutError"),
        ((ESCALATE, "{"), "llm decision: the reply is not JSON"),
        ((ESCALATE, json.dumps({"decision": "intervene"})), "expected ['decision', 'evidence'"),
        ((ESCALATE, good(extra=1)), "the reply has keys"),
        ((ESCALATE, good(decision="maybe")), "unknown decision 'maybe'"),
        ((ESCALATE, good(intent="order_pizza")), "'order_pizza' is not a sports service"),
        ((ESCALATE, good(intent="review_nudge")), "is not a sports service"),
        ((ESCALATE, good(evidence=["event:999"])), "cites ids not in the context: ['event:999']"),
        ((ESCALATE, good(evidence="event:10")), "evidence is not a list of ids"),
        ((ESCALATE, good(evidence=[])), "must cite evidence"),
        ((ESCALATE, good(message=" ")), "needs a message"),
        ((ESCALATE, good(message=None)), "the message is not text"),
    ],
)
def test_llm_fails_closed(replies: tuple[str | Exception, ...], reason: str) -> None:
    complete, _ = fake(*replies)
    got = LlmPolicy(complete).decide(ctx(decision_point(), retrieved("deviated")))
    assert (got.action, got.intent, got.regularity_ids) == ("abstain", ABSTAIN, ())
    assert reason in got.message


# -- registry -----------------------------------------------------------------------------------


def test_registry() -> None:
    assert set(POLICIES) == {"rules", "event_only", "recent_memory"}
    assert {name: p.name for name, p in POLICIES.items()} == {
        "rules": "rules",
        "event_only": "event_only",
        "recent_memory": "recent_memory",
    }
    complete, _ = fake()
    assert policy("llm", complete=complete).name == "llm"
    with pytest.raises(ValueError, match="needs a `complete`"):
        policy("llm")
    with pytest.raises(ValueError, match="unknown policy 'oracle'"):
        policy("oracle")


# -- catalogue ----------------------------------------------------------------------------------


def test_every_scope_has_services_with_distinct_intents() -> None:
    assert set(CATALOGUE) == {"sports", "home", "code", "desktop"}
    for scope in CATALOGUE:
        found = [s.intent for s in services(scope)]
        assert found and len(found) == len(set(found))
    with pytest.raises(ValueError, match="unknown scope"):
        services("garden")  # type: ignore[arg-type]


def test_services_apply_by_the_behavior_segment_kind() -> None:
    walk = services("sports")[0]
    assert walk.applies(WALK) and not walk.applies(SEDENTARY)
    by_intent = {s.intent: s for s in services("code")}
    review = Proposal(WALK.trigger, Predicate(("review", "type"), "pr_review"), WALK.window)
    ci = Proposal(WALK.trigger, Predicate(("ci_run", "conclusion"), "success"), WALK.window)
    assert by_intent["review_nudge"].applies(review) and not by_intent["review_nudge"].applies(ci)
    assert by_intent["ci_follow_up"].applies(ci)


def test_code_actionable_on_open_objects_only() -> None:
    by_intent = {s.intent: s for s in services("code")}
    review = by_intent["review_nudge"]
    assert review.actionable(obs(1, "10:00", "pr_opened", number=3))
    assert not review.actionable(obs(1, "10:00", "pr_merged", number=3))
    assert not review.actionable(obs(1, "10:00", "PullRequestEvent", action="closed", number=3))
    assert not review.actionable(obs(1, "10:00", "PushEvent"))
    assert by_intent["triage_nudge"].actionable(
        obs(1, "10:00", "IssuesEvent", action="opened", number=4)
    )
    failed = obs(1, "10:00", "workflow_run", conclusion="failure", run_id=99)
    assert by_intent["ci_follow_up"].actionable(failed)
    assert not by_intent["ci_follow_up"].actionable(
        obs(1, "10:00", "workflow_run", conclusion="success")
    )


def test_malformed_payload_is_no_moment_to_act() -> None:
    walk = services("sports")[0]
    assert not walk.actionable(EngineEvent(1, at("10:00"), "observation", {"attributes": "x"}))


@pytest.mark.parametrize(
    ("attributes", "family"),
    [
        ({"sensor": "M003", "room": "Kitchen"}, "meal"),
        ({"sensor": "Shower", "place": "Bathroom"}, "hygiene"),
        ({"sensor": "Bed", "place": "Bedroom"}, "sleep"),
        ({"sensor": "M010"}, "presence"),
    ],
)
def test_home_activity_family(attributes: dict[str, str], family: str) -> None:
    assert activity_family(obs(1, "10:00", "motion", **attributes)) == family


def test_home_contact_sensor_without_a_room_word_is_an_outing() -> None:
    assert activity_family(obs(1, "10:00", "door", sensor="D001")) == "outing"


def test_episodes() -> None:
    now = at("10:00")
    assert episode("sports", decision_point(), now) == "2026-03-02"
    assert episode("home", obs(1, "10:00", "motion", room="Kitchen"), now) == "2026-03-02/meal"
    assert episode("code", obs(1, "10:00", "IssuesEvent", number=4), now) == "issue:4"
    assert episode("code", obs(1, "10:00", "PushEvent"), now) == "PushEvent@2026-03-02"
    assert episode("desktop", snapshot(1, "10:00", "Mail"), now) == "2026-03-02/Mail"


def test_home_control_context_gives_phases_over_recent_events() -> None:
    kitchen = [obs(i, f"07:0{i}", "motion", sensor="M1", room="Kitchen") for i in range(1, 4)]
    proposed = Proposed("intervene", "check_in_routine", "e")
    context, history = control_context("home", kitchen[-1], kitchen, proposed)
    assert dict(context) == {"activity_family": "meal", "rooms": ["Kitchen"]}
    assert len(history) == 2  # the current event, passed last, is not its own history
    assert signature("home", context, history).phase == "sustained"
    _, history = control_context("home", kitchen[-1], kitchen[:1], proposed)
    assert signature("home", context, history).phase == "confirmed"


def test_code_control_context_names_object_and_delivery() -> None:
    current = obs(1, "10:00", "PullRequestEvent", action="opened", number=7, author="ana")
    proposed = Proposed("intervene", "review_nudge", "pull_request:7", message="nudge")
    context, history = control_context("code", current, (), proposed)
    assert dict(context) == {
        "repo": None,
        "object_kind": "pull_request",
        "number": 7,
        "mode": "comment",
        "recipient": "ana",
        "content": "nudge",
        "firing_condition": "PullRequestEvent:opened",
    }
    assert history == ()


def test_desktop_and_sports_control_context() -> None:
    proposed = Proposed("intervene", "resume_focus", "e")
    snap = snapshot(1, "10:00", "Firefox", "https://www.github.com/a/b")
    assert dict(control_context("desktop", snap, (), proposed)[0]) == {
        "app": "Firefox",
        "site": "github.com",
    }
    dp = decision_point()
    assert control_context("sports", dp, (), proposed)[0] == dp.payload


def test_a_review_is_on_its_pull_request_and_a_lock_screen_is_no_moment() -> None:
    review = obs(1, "10:00", "PullRequestReviewEvent", action="created", number=5, state="open")
    assert episode("code", review, at("10:00")) == "pull_request:5"
    resume = services("desktop")[0]
    assert not resume.actionable(snapshot(1, "10:00", "loginwindow"))
    assert resume.actionable(snapshot(1, "10:00", " Code "))
    assert episode("desktop", snapshot(1, "10:00", " Code "), at("10:00")) == "2026-03-02/Code"
