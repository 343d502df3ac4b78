"""Decision policies and the service catalogue: every rule by name, on small hand-made data."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from memory.engine import decide, words
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
    DECIDE_PROMPT,
    EVENT_ONLY_LOOKBACK,
    EXPECTATIONS,
    NEAR_DEADLINE,
    POLICIES,
    REGULARITIES,
    SCREEN_PROMPT,
    TODAY,
    TRAJECTORIES,
    DecisionContext,
    EventOnlyPolicy,
    LlmPolicy,
    RecentMemoryPolicy,
    RulesPolicy,
    llm_policy,
    policy,
    prompt_context,
    reads,
)
from memory.engine.memo import IdentityMemo
from memory.engine.records import DayRecord, EngineEvent, Observation, Predicate, Proposal
from memory.engine.refs import regularity_id
from memory.engine.regularities import wilson_lower
from memory.engine.retrieve import Occurrence, Retrieved

TZ = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 3, 2)
WALK = Proposal(
    Predicate(("decision_point", "available"), True),
    Predicate(("step_bout", "type"), "steps"),
    (time(9), time(10)),
)
SEDENTARY = Proposal(WALK.trigger, Predicate(("sedentary", "type"), "steps"), (time(9), time(10)))
OTHER = Proposal(WALK.trigger, Predicate(("active_hour", "type"), "active"), (time(11), time(12)))
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
        confidence=0.8,  # (7 + 1) / (8 + 2), smoothed
        occurrence=occurrence,
        distance=timedelta(0),
        deadline=at(deadline),
        fact_ids=facts,
        n_f=7,
        n_v=1,
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
        "Usually a walk by 10:00 after a decision point while available (7 of the last 8 times);"
        " none yet today at 10:15."
    )
    counted = replace(retrieved("deviated"), n_f=9, n_v=2)
    worded = RulesPolicy().decide(ctx(decision_point(hhmm="10:15"), counted)).message
    assert "(9 of the last 11 times); none yet today at 10:15." in worded


def test_rules_scores_a_regularity_by_how_often_at_least_it_holds() -> None:
    # At the default threshold (a false alarm costs a miss: 0.50) a routine must show that it
    # holds at least half the time: 3 fulfilled days in 6 (smoothed, 0.50) do not, 8 in 8 do.
    half = replace(retrieved("deviated"), confidence=0.5, n_f=3, n_v=3)
    got = RulesPolicy().decide(ctx(decision_point(hhmm="10:15"), half))
    assert got.action == "abstain"
    assert f"{RID}: fulfilled on 3 of 6 days, score 0.19 is below the threshold 0.50" in (
        got.message
    )
    every = replace(retrieved("deviated"), confidence=0.9, n_f=8, n_v=0)
    acted = RulesPolicy().decide(ctx(decision_point(hhmm="10:15"), every))
    assert (acted.action, acted.score) == ("intervene", wilson_lower(8, 8))
    assert round(acted.score, 2) == 0.68
    # A team that counts a false alarm a ninth of a miss (threshold 0.10) hears the weaker one.
    assert RulesPolicy(threshold=0.1).decide(ctx(decision_point(hhmm="10:15"), half)).action == (
        "intervene"
    )


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


def test_rules_passes_over_a_regularity_not_due_to_the_next() -> None:
    got = RulesPolicy().decide(
        ctx(decision_point(), retrieved("upcoming", proposal=OTHER), retrieved("deviated"))
    )
    assert got.regularity_ids == (RID,)


def test_rules_passes_over_a_regularity_whose_services_cannot_act_now() -> None:
    # A failed CI run is no moment for a review nudge, but is one for a CI follow-up.
    review = Proposal(WALK.trigger, Predicate(("review", "type"), "pr_review"), WALK.window)
    ci = Proposal(WALK.trigger, Predicate(("ci_run", "conclusion"), "success"), WALK.window)
    failed = obs(1, "10:15", "workflow_run", conclusion="failure", run_id=99)
    got = RulesPolicy().decide(
        ctx(
            failed,
            retrieved("deviated", proposal=review),
            retrieved("deviated", proposal=ci),
            scope="code",
        )
    )
    assert (got.intent, got.regularity_ids) == ("ci_follow_up", (regularity_id(ci),))


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


# -- the decision context and what a policy reads -----------------------------------------------


def test_an_abstention_has_no_intent_ids_or_evidence_and_says_why() -> None:
    assert ctx(decision_point()).abstain("because") == Proposed(
        "abstain", ABSTAIN, "2026-03-02", message="because"
    )
    assert ABSTAIN == ""


class _Silent:
    name = "silent"

    def decide(self, ctx: DecisionContext) -> Proposed:
        return ctx.abstain("silent")


class _Reads:
    def __init__(self, found: object) -> None:
        self.reads = found


def test_reads_defaults_to_regularities_and_takes_only_a_frozenset() -> None:
    assert (TODAY, TRAJECTORIES, REGULARITIES) == ("today", "trajectories", "regularities")
    assert EXPECTATIONS == "expectations"
    assert reads(_Silent()) == frozenset({REGULARITIES})
    assert reads(_Reads(frozenset({TODAY, 7}))) == frozenset({"today", "7"})
    assert reads(_Reads({TODAY})) == frozenset()  # a plain set is no declaration
    assert reads(_Reads([TRAJECTORIES])) == frozenset()
    assert reads(RulesPolicy()) == frozenset({REGULARITIES, EXPECTATIONS, TRAJECTORIES})
    assert reads(EventOnlyPolicy()) == frozenset()
    assert reads(RecentMemoryPolicy()) == frozenset({TODAY, TRAJECTORIES})
    complete, _ = fake()
    assert reads(LlmPolicy(complete)) == frozenset({TODAY, TRAJECTORIES, REGULARITIES})


# -- rules: every reason, the pending wording, the service chosen -------------------------------


def test_rules_abstention_lists_each_regularity_and_why_it_was_passed_over() -> None:
    got = RulesPolicy().decide(
        ctx(
            decision_point(available=False),
            retrieved("upcoming", proposal=OTHER),
            retrieved("deviated", proposal=SEDENTARY),
            retrieved("deviated"),
        )
    )
    assert got == ctx(decision_point()).abstain(
        f"{regularity_id(OTHER)} is upcoming, not due; "
        f"{regularity_id(SEDENTARY)}: no service applies to its behavior; "
        f"{RID}: the current event is no moment to act"
    )


def test_rules_pending_message_says_not_yet_after_the_service_intro() -> None:
    got = RulesPolicy().decide(ctx(decision_point(hhmm="09:30"), retrieved("pending")))
    walk = services("sports")[0]
    assert got == Proposed(
        "intervene",
        "suggest_walk",
        "2026-03-02",
        regularity_ids=(RID,),
        message=f"{walk.message} Usually a walk by 10:00 after a decision point while "
        "available (7 of the last 8 times); not yet at 09:30.",
        evidence_ids=("event:10", TRIGGER_FACT, RID),
        score=wilson_lower(7, 8),  # how often, at least, 7 fulfilled days in 8 show it holds
    )


def test_rules_a_pending_regularity_past_its_deadline_is_due() -> None:
    assert RulesPolicy().decide(ctx(decision_point(hhmm="10:20"), retrieved("pending"))).action == (
        "intervene"
    )


def test_rules_takes_the_first_applying_service_that_is_actionable() -> None:
    # suggest_walk and stand_break both serve step bouts; a walk that usually happens by now
    # and has not is the walk's to say, after an hour of sitting too (it stands them up as
    # well); where the person cannot be reached, neither acts.
    slot = point(10, "10:15", "sports_slot", worn_last_60=True, sedentary_min_last_60=55)
    got = RulesPolicy().decide(ctx(slot, retrieved("deviated")))
    walk = services("sports")[0]
    assert (got.action, got.intent, got.regularity_ids) == ("intervene", "suggest_walk", (RID,))
    assert got.message.startswith(walk.message + " Usually a walk by 10:00")
    assert got.evidence_ids == ("point:10", TRIGGER_FACT, RID)
    away = point(10, "10:15", "sports_slot", worn_last_60=False, sedentary_min_last_60=55)
    assert RulesPolicy().decide(ctx(away, retrieved("deviated"))).action == "abstain"


# -- event only at raw events ---------------------------------------------------------------------


def test_event_only_intervention_is_the_service_message_citing_the_event() -> None:
    got = EventOnlyPolicy().decide(ctx(decision_point()))
    assert got == Proposed(
        "intervene",
        "suggest_walk",
        "2026-03-02",
        message=services("sports")[0].message,
        evidence_ids=("event:10",),
    )


def test_event_only_lookback_is_inclusive_and_reads_nothing_after_the_event() -> None:
    def decided(*prior: EngineEvent) -> Proposed:
        return EventOnlyPolicy().decide(ctx(decision_point(), prior=prior))

    on_edge = decided(obs(5, "08:45", "steps", value=120))  # exactly an hour before 09:45
    assert on_edge == ctx(decision_point()).abstain(
        "event_only: steps were counted in the last hour"
    )
    assert decided(obs(5, "08:44", "steps", value=120)).action == "intervene"
    assert decided(obs(5, "09:50", "steps", value=120)).action == "intervene"  # later
    assert decided(obs(5, "09:45", "steps", value=120)).action == "abstain"  # same moment


@pytest.mark.parametrize(
    ("value", "blocks"), [(0.5, True), (True, False), ("5", False), (-3, False)]
)
def test_event_only_sports_counts_only_positive_numbers_as_steps(value: Any, blocks: bool) -> None:
    prior = (obs(5, "09:00", "steps", value=value),)
    got = EventOnlyPolicy().decide(ctx(decision_point(), prior=prior))
    assert got.action == ("abstain" if blocks else "intervene")


def test_event_only_leaves_out_the_current_event_only() -> None:
    # The current event, repeated in recent, is not its own blocker; the same id of another
    # kind is another event.
    current = obs(9, "10:00", "PullRequestEvent", action="opened", number=7, state="open")
    again = ctx(current, scope="code", prior=(current,))
    assert EventOnlyPolicy().decide(again).action == "intervene"
    twin = EngineEvent(9, at("09:30"), "other", current.payload)
    got = EventOnlyPolicy().decide(ctx(current, scope="code", prior=(twin,)))
    assert got.message == "event_only: pull_request:7 had an event in the last hour"


def test_event_only_messages_of_each_scope() -> None:
    kitchen = obs(9, "07:00", "motion", value="ON", sensor="M001", room="Kitchen")
    earlier = obs(8, "06:30", "motion", value="ON", sensor="M002")
    assert EventOnlyPolicy().decide(ctx(kitchen, scope="home", prior=(earlier,))).message == (
        "event_only: motion was seen in the last hour"
    )
    prior = (snapshot(8, "09:50"),)
    got = EventOnlyPolicy().decide(ctx(snapshot(9, "10:00"), scope="desktop", prior=prior))
    assert got.message == "event_only: Code was in use in the last hour"
    unavailable = EventOnlyPolicy().decide(ctx(decision_point(available=False)))
    assert unavailable.message == "no service is actionable at this event"


def test_event_only_other_objects_and_apps_do_not_block() -> None:
    pr = obs(9, "10:00", "PullRequestEvent", action="opened", number=7, state="open")
    other = obs(8, "09:30", "PullRequestEvent", action="opened", number=8, state="open")
    assert EventOnlyPolicy().decide(ctx(pr, scope="code", prior=(other,))).action == "intervene"
    mail = (snapshot(8, "09:50", app="Mail"),)
    got = EventOnlyPolicy().decide(ctx(snapshot(9, "10:00"), scope="desktop", prior=mail))
    assert got.action == "intervene"
    named = EngineEvent(8, at("09:50"), "observation", {"app": "Code"})  # not a snapshot
    got = EventOnlyPolicy().decide(ctx(snapshot(9, "10:00"), scope="desktop", prior=(named,)))
    assert got.action == "intervene"


# -- event only at decision points ---------------------------------------------------------------


def point(n: int, hhmm: str, type_: str, back: int = 0, **fields: Any) -> EngineEvent:
    day = MONDAY - timedelta(days=back)
    payload = {"type": type_, "day": day.isoformat(), **fields}
    return EngineEvent(n, at(hhmm) - timedelta(days=back), "decision_point", payload)


def rule_at(current: EngineEvent, scope: Scope, *prior: EngineEvent) -> Proposed:
    return EventOnlyPolicy().decide(ctx(current, scope=scope, prior=prior))


def message_of(scope: Scope, intent: str, reason: str) -> str:
    found = next(s for s in services(scope) if s.intent == intent)
    return f"{found.message} ({reason})"


NO_RULE = "event_only: no rule holds at this point"


def test_a_point_of_a_scope_without_point_rules_abstains() -> None:
    got = rule_at(point(3, "10:00", "PullRequestEvent", number=7), "code")
    assert got == Proposed("abstain", ABSTAIN, "pull_request@2026-03-02", message=NO_RULE)


def home_point(n: int, hhmm: str = "10:00", back: int = 0, **fields: Any) -> EngineEvent:
    base = {"segment": 12, "events": 3, "rooms": {}, "on_at_close": [], "quiet_min": 5}
    return point(n, hhmm, "home_segment", back, **{**base, **fields})


def test_home_routine_rule_names_a_room_active_at_this_time_on_both_last_days() -> None:
    current = home_point(20, rooms={"Kitchen": 2})
    yesterday = home_point(11, back=1, rooms={"Bath": 1, "Kitchen": 1, "Hall": 2})
    before = home_point(2, back=2, rooms={"Attic": 1, "Bath": 2, "Hall": 1, "Kitchen": 3})
    got = rule_at(current, "home", before, yesterday)
    reason = "the bath was active at this time on the last two days"
    assert got == Proposed(
        "intervene",
        "check_in_routine",
        "2026-03-02/meal",
        message=message_of("home", "check_in_routine", reason),
        evidence_ids=("point:20",),
    )


def test_home_routine_rule_needs_both_days_at_the_same_segment() -> None:
    current = home_point(20, rooms={"Kitchen": 2})
    yesterday = home_point(11, back=1, rooms={"Bath": 1})
    assert rule_at(current, "home", yesterday).message == NO_RULE
    other_segment = home_point(2, back=2, segment=11, rooms={"Bath": 1})
    assert rule_at(current, "home", other_segment, yesterday).message == NO_RULE
    # Nothing missing: every usual room is active now.
    before = home_point(2, back=2, rooms={"Kitchen": 1})
    assert rule_at(current, "home", before, home_point(11, back=1, rooms={"Kitchen": 1})) == (
        ctx(current, scope="home").abstain(NO_RULE)
    )


def test_home_routine_rule_is_no_moment_when_nobody_is_about() -> None:
    current = home_point(20, events=0, quiet_min=120, rooms={})
    yesterday = home_point(11, back=1, rooms={"Bath": 1})
    before = home_point(2, back=2, rooms={"Bath": 1})
    assert rule_at(current, "home", before, yesterday).message == NO_RULE


def test_home_device_rule_after_half_an_hour_on_the_first_device_only() -> None:
    def on(device: str, hhmm: str) -> dict[str, str]:
        return {"device": device, "since": at(hhmm).isoformat()}

    items = [
        "junk",
        {"device": "D0"},
        {"device": "D9", "since": 5},
        on("D1", "09:15"),
        on("D2", "09:00"),
    ]
    got = rule_at(home_point(20, hhmm="09:45", on_at_close=items), "home")
    assert got.intent == "check_device"
    assert got.message == message_of("home", "check_device", "D1 on since 09:15")
    assert rule_at(
        home_point(20, hhmm="09:45", on_at_close=[on("D1", "09:16")]), "home"
    ).message == (NO_RULE)
    assert rule_at(home_point(20, hhmm="09:45", on_at_close=None), "home").message == NO_RULE


@pytest.mark.parametrize(
    ("hhmm", "quiet", "holds"),
    [
        ("10:00", 180, True),
        ("10:00", 180.9, True),
        ("10:00", 179, False),
        ("10:00", True, False),
        ("10:00", None, False),
        ("07:59", 400, False),
        ("08:00", 400, True),
        ("21:59", 400, True),
        ("22:00", 400, False),
    ],
)
def test_home_stillness_rule_in_the_daytime_only(hhmm: str, quiet: Any, holds: bool) -> None:
    got = rule_at(home_point(20, hhmm=hhmm, events=0, quiet_min=quiet), "home")
    if holds:
        minutes = int(quiet)
        assert got.intent == "wellbeing_check"
        assert got.message == message_of(
            "home", "wellbeing_check", f"no sensor event for {minutes} minutes"
        )
    else:
        assert got.message == NO_RULE


def test_home_device_comes_before_stillness() -> None:
    on = [{"device": "D1", "since": at("09:00").isoformat()}]
    got = rule_at(home_point(20, events=0, quiet_min=300, on_at_close=on), "home")
    assert got.intent == "check_device"


def slot(n: int, back: int = 0, **fields: Any) -> EngineEvent:
    base = {"slot": 2, "worn_last_60": True, "sedentary_min_last_60": 10}
    return point(n, "11:00", "sports_slot", back, **{**base, **fields})


def test_sports_walk_rule_after_an_active_hour_yesterday() -> None:
    got = rule_at(slot(20, steps_last_60=249.6), "sports", slot(9, back=1, steps_last_60=1000))
    assert got == Proposed(
        "intervene",
        "suggest_walk",
        "2026-03-02",
        message=message_of("sports", "suggest_walk", "249 steps in the last hour, 1000 yesterday"),
        evidence_ids=("point:20",),
    )


@pytest.mark.parametrize(
    ("now", "before"), [(250, 1000), (249, 999), (None, 1000), (249, None), (249, "1000")]
)
def test_sports_walk_rule_thresholds(now: Any, before: Any) -> None:
    got = rule_at(slot(20, steps_last_60=now), "sports", slot(9, back=1, steps_last_60=before))
    assert got.message == NO_RULE


def test_sports_rules_compare_with_the_same_slot_yesterday_the_latest_seen() -> None:
    current = slot(20, steps_last_60=100)
    assert (
        rule_at(current, "sports", slot(9, back=1, slot=3, steps_last_60=1500)).message == NO_RULE
    )
    assert rule_at(current, "sports", slot(9, back=2, steps_last_60=1500)).message == NO_RULE
    twice = (slot(8, back=1, steps_last_60=1500), slot(9, back=1, steps_last_60=900))
    assert rule_at(current, "sports", *twice).message == NO_RULE
    assert rule_at(current, "sports", *reversed(twice)).intent == "suggest_walk"


@pytest.mark.parametrize(
    ("slot_no", "today", "before", "holds"),
    [
        (2, 499, 1000, True),
        (1, 499.5, 1000, True),
        (3, 0, 1000, True),
        (2, 500, 1000, False),
        (2, 400, 999, False),
        (0, 100, 3000, False),
        (4, 100, 3000, False),
        (2, None, 3000, False),
        (2, 100, None, False),
    ],
)
def test_sports_pace_rule(slot_no: int, today: Any, before: Any, holds: bool) -> None:
    current = slot(20, slot=slot_no, steps_last_60=300, steps_today=today)
    yesterday = slot(9, back=1, slot=slot_no, steps_last_60=300, steps_today=before)
    got = rule_at(current, "sports", yesterday)
    if holds:
        assert got.intent == "step_goal_nudge"
        reason = f"{int(today)} steps so far, {int(before)} by now yesterday"
        assert got.message == message_of("sports", "step_goal_nudge", reason)
    else:
        assert got.message == NO_RULE


def test_sports_pace_rule_needs_yesterday() -> None:
    assert rule_at(slot(20, steps_last_60=300, steps_today=10), "sports").message == NO_RULE


@pytest.mark.parametrize(
    ("sitting", "steps", "holds"),
    [(50, 249, True), (70.5, 0, True), (49, 0, False), (50, 250, False), (50, None, False)],
)
def test_sports_sitting_rule(sitting: Any, steps: Any, holds: bool) -> None:
    got = rule_at(slot(20, sedentary_min_last_60=sitting, steps_last_60=steps), "sports")
    if holds:
        reason = f"{int(sitting)} sedentary minutes in the last hour"
        assert got.intent == "stand_break"
        assert got.message == message_of("sports", "stand_break", reason)
    else:
        assert got.message == NO_RULE


def test_sports_a_rule_whose_service_cannot_act_gives_way_to_the_next() -> None:
    # The walk rule holds after an hour of sitting too: a walk is a moment to act at any
    # reachable slot. Where the person cannot be reached, no rule's service can act.
    got = rule_at(
        slot(20, sedentary_min_last_60=55, steps_last_60=100),
        "sports",
        slot(9, back=1, steps_last_60=2000),
    )
    assert got.intent == "suggest_walk"
    unreachable = slot(20, worn_last_60=False, sedentary_min_last_60=55, steps_last_60=100)
    assert rule_at(unreachable, "sports").message == NO_RULE


def frame(n: int, start: Any, end: Any, back: int = 0, **fields: Any) -> EngineEvent:
    return point(n, "12:00", "frame_end", back, start=start, end=end, **fields)


@pytest.mark.parametrize(
    ("spans", "since"),
    [
        ((("09:00", "09:40"), ("09:44", "10:30")), "09:00"),  # a 4-minute gap is no break
        ((("09:00", "10:30"), ("09:10", "09:20")), "09:00"),  # a frame inside another
        ((("07:00", "07:10"), ("09:00", "10:30")), "09:00"),  # after a break
        (((None, "01:30"),), "00:00"),  # an unreadable clock is midnight
        ((("9:00", "01:30"),), "00:00"),
    ],
)
def test_desktop_break_rule(spans: tuple[tuple[Any, Any], ...], since: str) -> None:
    frames = [frame(i, start, end) for i, (start, end) in enumerate(spans, start=1)]
    got = rule_at(frames[-1], "desktop", *frames[:-1])
    assert got == Proposed(
        "intervene",
        "take_break",
        "2026-03-02/",
        message=message_of("desktop", "take_break", f"working without a break since {since}"),
        evidence_ids=(f"point:{len(frames)}",),
    )


@pytest.mark.parametrize(
    "spans",
    [
        (("09:00", "09:40"), ("09:45", "10:30")),  # five minutes is a break
        (("09:00", "09:40"), ("09:44", "10:29")),  # 89 minutes
        (("08:00", "09:40"), ("09:50", "10:00")),  # the long stretch ended with a break
    ],
)
def test_desktop_break_rule_does_not_hold(spans: tuple[tuple[str, str], ...]) -> None:
    frames = [frame(i, start, end) for i, (start, end) in enumerate(spans, start=1)]
    assert rule_at(frames[-1], "desktop", *frames[:-1]).message == NO_RULE


def test_desktop_break_rule_reads_today_only() -> None:
    yesterday = frame(1, "09:00", "10:40", back=1)
    assert rule_at(frame(2, "10:40", "10:45"), "desktop", yesterday).message == NO_RULE


@pytest.mark.parametrize(
    ("switches", "holds"), [(12, True), (12.0, True), (11, False), (None, False)]
)
def test_desktop_switching_rule(switches: Any, holds: bool) -> None:
    got = rule_at(frame(1, "10:00", "10:05", switches_30=switches), "desktop")
    if holds:
        reason = "12 apps and windows started in the last 30 minutes"
        assert got.message == message_of("desktop", "refocus", reason)
    else:
        assert got.message == NO_RULE


def test_desktop_break_comes_before_switching() -> None:
    got = rule_at(frame(1, "08:00", "10:00", switches_30=20), "desktop")
    assert got.intent == "take_break"


# -- recent memory -------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _firsts_afresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # _firsts and _habits cache per record; mutmut forks each mutant from a process that ran
    # the tests.
    monkeypatch.setattr(decide, "_firsts", IdentityMemo(decide._day_firsts, limit=4096))
    monkeypatch.setattr(decide, "_HABITS", {})
    yield


KITCHEN = ("room_presence", "room")


def day_of(back: int, *seen: tuple[str, tuple[str, ...], Any]) -> DayRecord:
    day = MONDAY - timedelta(days=back)
    return DayRecord(
        day,
        tuple(
            Observation(
                datetime.combine(day, time.fromisoformat(hhmm), tzinfo=TZ),
                path,
                value,
                f"fact:{day.isoformat()}/s/{hhmm}/{i}",
            )
            for i, (hhmm, path, value) in enumerate(seen)
        ),
    )


def recent_ctx(
    current: EngineEvent, *days: DayRecord, today: DayRecord | None = None
) -> DecisionContext:
    return replace(ctx(current, scope="home"), trajectories=days, today=today or DayRecord(MONDAY))


MOTION = obs(30, "08:00", "motion", value="ON", sensor="M1", room="Bedroom")


def test_recent_memory_names_what_happened_by_now_on_each_of_the_last_three_days() -> None:
    days = [day_of(b, ("07:30", KITCHEN, "Kitchen")) for b in (3, 2, 1)]
    got = RecentMemoryPolicy().decide(recent_ctx(MOTION, *days))
    routine = services("home")[0]
    assert got == Proposed(
        "intervene",
        "check_in_routine",
        "2026-03-02/sleep",
        message=f"{routine.message} (room_presence/room happened by 08:00 on each of the last "
        "3 days, not yet today)",
        evidence_ids=("event:30", "fact:2026-03-01/s/07:30/0"),
    )


def test_recent_memory_needs_three_closed_days_and_reads_the_last_three() -> None:
    kitchen = ("07:30", KITCHEN, "Kitchen")
    got = RecentMemoryPolicy().decide(recent_ctx(MOTION, day_of(2, kitchen), day_of(1, kitchen)))
    assert got == recent_ctx(MOTION).abstain("fewer than 3 closed days in memory")
    older = [day_of(4), day_of(3, kitchen), day_of(2, kitchen), day_of(1, kitchen)]
    assert RecentMemoryPolicy().decide(recent_ctx(MOTION, *older)).action == "intervene"
    newer = [day_of(4, kitchen), day_of(3, kitchen), day_of(2, kitchen), day_of(1)]
    assert RecentMemoryPolicy().decide(recent_ctx(MOTION, *newer)).action == "abstain"


NOTHING_MISSING = "recent_memory: nothing usual by now is missing today"


def test_recent_memory_reads_today_only_where_something_was_usual_by_now() -> None:
    kitchen = ("07:30", KITCHEN, "Kitchen")
    reads_today = RecentMemoryPolicy().reads_today
    now = recent_ctx(MOTION).now  # 08:00
    assert not reads_today((day_of(2, kitchen), day_of(1, kitchen)), now)  # too few days
    assert not reads_today(tuple(day_of(b) for b in (3, 2, 1)), now)  # nothing usual
    later = ("08:30", KITCHEN, "Kitchen")
    assert not reads_today(tuple(day_of(b, later) for b in (3, 2, 1)), now)  # not by now
    assert reads_today(tuple(day_of(b, kitchen) for b in (3, 2, 1)), now)


@pytest.mark.parametrize(
    ("on_each", "today", "acts"),
    [
        ("08:00", None, True),  # at the current clock time counts
        ("08:01", None, False),  # later than now on the days before
        ("07:30", "07:45", False),  # already happened today
        ("07:30", "08:00", False),
        ("07:30", "08:30", True),  # later today than now: not yet
    ],
)
def test_recent_memory_compares_by_the_clock(on_each: str, today: str | None, acts: bool) -> None:
    days = [day_of(b, (on_each, KITCHEN, "Kitchen")) for b in (3, 2, 1)]
    seen = day_of(0, (today, KITCHEN, " kitchen")) if today else None
    got = RecentMemoryPolicy().decide(recent_ctx(MOTION, *days, today=seen))
    assert got.action == ("intervene" if acts else "abstain")
    if not acts:
        assert got.message == NOTHING_MISSING


def test_recent_memory_takes_the_first_candidate_a_service_can_act_on() -> None:
    start = ("day_start", "room")
    device = ("device_use", "device")
    seen = (("06:10", start, "Bedroom"), ("07:00", device, "kettle"), ("07:10", KITCHEN, "Kitchen"))
    days = [day_of(b, *seen) for b in (3, 2, 1)]
    got = RecentMemoryPolicy().decide(recent_ctx(MOTION, *days))
    # day_start comes first in order but no service serves it; device_use comes next.
    assert got.intent == "check_in_routine"
    assert "(device_use/device happened by 08:00" in got.message
    assert got.evidence_ids == ("event:30", "fact:2026-03-01/s/07:00/1")
    quiet = obs(30, "08:00", "temperature", value=21, sensor="T1")  # no moment to act
    assert RecentMemoryPolicy().decide(recent_ctx(quiet, *days)).message == NOTHING_MISSING


def test_recent_memory_passes_over_a_pathless_fact() -> None:
    days = [
        day_of(b, ("06:00", (), "x"), ("06:10", ("day_start", "room"), "Bed")) for b in (3, 2, 1)
    ]
    assert RecentMemoryPolicy().decide(recent_ctx(MOTION, *days)).message == NOTHING_MISSING


def test_recent_memory_orders_values_that_do_not_compare() -> None:
    # A naive and an aware time at one path: their canonical forms cannot be compared, so the
    # candidates are ordered by their text.
    since = ("device_use", "since")
    seen = (("06:00", since, "2026-01-01T07:00"), ("06:05", since, "2026-01-01T07:00+00:00"))
    days = [day_of(b, *seen) for b in (3, 2, 1)]
    got = RecentMemoryPolicy().decide(recent_ctx(MOTION, *days))
    assert got.evidence_ids == ("event:30", "fact:2026-03-01/s/06:00/0")


def test_recent_memory_cites_the_first_time_of_the_latest_day() -> None:
    early = [day_of(b, ("07:30", KITCHEN, "Kitchen")) for b in (3, 2)]
    latest = day_of(1, ("07:40", KITCHEN, "Kitchen"), ("07:20", KITCHEN, "KITCHEN"))
    got = RecentMemoryPolicy().decide(recent_ctx(MOTION, *early, latest))
    assert got.evidence_ids == ("event:30", "fact:2026-03-01/s/07:20/1")


def test_firsts_keeps_the_earliest_and_skips_values_that_equal_nothing() -> None:
    record = day_of(
        1,
        ("07:10", KITCHEN, float("nan")),
        ("07:40", KITCHEN, "Kitchen"),
        ("07:20", KITCHEN, "kitchen"),
        ("07:20", KITCHEN, "Kitchen"),
        ("07:50", KITCHEN, float("nan")),
    )
    found = decide._firsts(record)
    assert found == {(KITCHEN, ("str", "kitchen")): (time(7, 20), "fact:2026-03-01/s/07:20/2")}
    assert decide._firsts(record) is found  # cached for the same record


def test_habits_are_read_again_when_any_of_the_last_days_is_another() -> None:
    kitchen = ("07:20", KITCHEN, "Kitchen")
    a, b, c = day_of(3, kitchen), day_of(2, kitchen), day_of(1, kitchen)
    habits = decide._habits((a, b, c))
    assert habits is not None
    assert habits.in_order == (((KITCHEN, ("str", "kitchen")), time(7, 20)),)
    assert decide._habits((a, b, c)) is habits  # the same three days: worked out once
    # The same last day after another first day (another set of days): read again.
    other = decide._habits((day_of(3), b, c))
    assert other is not None and other.in_order == () and not other.any_by(time(23))
    # A stale entry under the last day's id never answers for other days.
    decide._HABITS[id(c)] = habits
    assert decide._habits((day_of(3), b, c)).in_order == ()  # type: ignore[union-attr]


def test_something_is_habitual_by_a_clock_only_once_it_happened_by_then_on_every_day() -> None:
    days = (
        day_of(3, ("07:00", KITCHEN, "Kitchen")),
        day_of(2, ("08:30", KITCHEN, "Kitchen")),
        day_of(1, ("07:45", KITCHEN, "Kitchen")),
    )
    habits = decide._habits(days)
    assert habits is not None and habits.earliest == time(8, 30)
    assert not habits.any_by(time(8, 29)) and habits.any_by(time(8, 30))
    assert decide._habits(days[1:]) is None  # fewer than three closed days


# -- llm: the prompts, each fail-closed reason in full, the accepted reply ------------------------


def test_llm_prompts_are_the_instructions_then_the_compact_sorted_context() -> None:
    current = EngineEvent(10, at("09:45"), "observation", {**decision_point().payload, "note": "ü"})
    c = ctx(current, retrieved("deviated"))
    complete, prompts = fake(ESCALATE, good())
    LlmPolicy(complete).decide(c)
    text = json.dumps(prompt_context(c), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert prompts == [SCREEN_PROMPT + text, DECIDE_PROMPT + text]


def test_llm_accepts_a_stripped_message_and_cites_each_id_once() -> None:
    reply = good(message="  Walk?  ", evidence=[TRIGGER_FACT, RID, TRIGGER_FACT, "event:10"])
    complete, _ = fake(ESCALATE, reply)
    got = LlmPolicy(complete).decide(ctx(decision_point(), retrieved("deviated")))
    assert (got.message, got.evidence_ids) == ("Walk?", (TRIGGER_FACT, RID, "event:10"))
    assert got.regularity_ids == (RID,)
    complete, _ = fake(ESCALATE, good(evidence=["event:10"]))
    assert LlmPolicy(complete).decide(ctx(decision_point())).regularity_ids == ()


class _Number:
    def __call__(self, prompt: str) -> Any:
        return 42


@pytest.mark.parametrize(
    ("replies", "reason"),
    [
        ((RuntimeError("down"),), "llm pre-screen: the call failed (RuntimeError: down)"),
        (("x" * 300,), f"llm pre-screen: the reply is not JSON: {'x' * 200!r}"),
        ((json.dumps([1]),), "llm pre-screen: the reply is JSON list, not an object"),
        ((json.dumps({"a": 1}),), "llm pre-screen: the reply has keys ['a'], expected ['screen']"),
        ((json.dumps({"screen": 1}),), "llm pre-screen: unknown answer 1"),
        ((ESCALATE, "[]"), "llm decision: the reply is JSON list, not an object"),
        (
            (ESCALATE, json.dumps({"decision": "intervene"})),
            "llm decision: the reply has keys ['decision'], expected "
            "['decision', 'evidence', 'intent', 'message']",
        ),
        ((ESCALATE, good(decision=None)), "llm decision: unknown decision None"),
        ((ESCALATE, good(message=1)), "llm decision: the message is not text"),
        ((ESCALATE, good(evidence=[1])), "llm decision: evidence is not a list of ids"),
        (
            (ESCALATE, good(evidence=[f"event:{i}" for i in range(90, 96)])),
            "llm decision: cites ids not in the context: "
            "['event:90', 'event:91', 'event:92', 'event:93', 'event:94']",
        ),
        ((ESCALATE, good(intent=3)), "llm decision: intent 3 is not a sports service"),
        ((ESCALATE, good(message="\t")), "llm decision: an intervention needs a message"),
        ((ESCALATE, good(evidence=[])), "llm decision: an intervention must cite evidence"),
        ((ESCALATE, good(decision="abstain", message="")), "llm: abstain"),
    ],
)
def test_llm_fail_closed_messages_in_full(
    replies: tuple[str | Exception, ...], reason: str
) -> None:
    complete, _ = fake(*replies)
    c = ctx(decision_point(), retrieved("deviated"))
    assert LlmPolicy(complete).decide(c) == c.abstain(reason)


def test_llm_a_reply_that_is_not_text_fails_closed() -> None:
    c = ctx(decision_point())
    assert LlmPolicy(_Number()).decide(c) == c.abstain("llm pre-screen: the reply is int, not text")
    replies = iter([ESCALATE, None])
    got = LlmPolicy(lambda _: next(replies)).decide(c)  # type: ignore[arg-type,return-value]
    assert got == c.abstain("llm decision: the reply is NoneType, not text")


def test_prompt_context_in_full() -> None:
    weekly = Proposal(WALK.trigger, WALK.behavior, (time(9), time.max), frozenset({4, 0}))
    first = replace(retrieved("deviated", proposal=weekly), confidence=0.81249, state="weakening")
    second = retrieved("pending")
    prior = EngineEvent(3, at("09:00"), "observation", {"type": "steps", "private": {"a": 1}})
    c = ctx(decision_point(), first, second, prior=(prior,))
    walk, goal, stand = services("sports")
    wid = regularity_id(weekly)

    def regularity(r: Retrieved, window: list[str], weekdays: Any) -> dict[str, Any]:
        return {
            "id": regularity_id(r.proposal),
            "sentence": words.regularity(r.proposal),
            "trigger": "decision_point/available=True",
            "behavior": "step_bout/type=steps",
            "window": window,
            "weekdays": weekdays,
            "state": r.state,
            "confidence": round(r.confidence, 3),
            "occurrence": r.occurrence,
            "deadline": "2026-03-02T10:00:00+01:00",
            "facts": [TRIGGER_FACT],
        }

    assert prompt_context(c) == {
        "scope": "sports",
        "now": "2026-03-02T09:45:00+01:00",
        "services": [{"intent": s.intent, "message": s.message} for s in (walk, goal, stand)],
        "current": {
            "id": "event:10",
            "at": "2026-03-02T09:45:00+01:00",
            "kind": "observation",
            "payload": dict(decision_point().payload),
        },
        "recent": [
            {
                "id": "event:3",
                "at": "2026-03-02T09:00:00+01:00",
                "kind": "observation",
                "payload": {"type": "steps"},
            }
        ],
        "today": [
            {
                "id": TRIGGER_FACT,
                "at": "2026-03-02T09:10:00+01:00",
                "path": ["decision_point", "available"],
                "value": True,
            }
        ],
        "regularities": [
            regularity(first, ["09:00", "24:00"], [0, 4]),
            regularity(second, ["09:00", "10:00"], None),
        ],
        "citable": sorted({"event:3", "event:10", TRIGGER_FACT, wid, RID}),
    }
    assert prompt_context(c)["regularities"][0]["confidence"] == 0.812


def test_prompt_context_keeps_the_newest_recent_events_and_observations() -> None:
    prior = tuple(obs(100 + i, f"08:{i:02d}", "steps", value=i) for i in range(25))
    seen = tuple(
        Observation(at(f"07:{i:02d}"), ("steps", "value"), i, f"fact:2026-03-02/s/{i}")
        for i in range(35)
    )
    c = replace(ctx(decision_point(), prior=prior), today=DayRecord(MONDAY, seen))
    found = prompt_context(c)
    assert [e["id"] for e in found["recent"]] == [f"event:{i}" for i in range(105, 125)]
    assert [o["id"] for o in found["today"]] == [f"fact:2026-03-02/s/{i}" for i in range(5, 35)]
    assert found["citable"] == sorted(
        {*(f"event:{i}" for i in range(105, 125)), "event:10", *(o["id"] for o in found["today"])}
    )


# -- the registry in full ------------------------------------------------------------------------


def test_policy_by_name_and_its_errors_in_full() -> None:
    assert policy("rules") is POLICIES["rules"]
    assert policy("event_only") is POLICIES["event_only"]
    assert isinstance(policy("recent_memory"), RecentMemoryPolicy)
    complete, _ = fake()
    made = policy("llm", complete=complete)
    assert isinstance(made, LlmPolicy) and made.complete is complete
    assert llm_policy(complete) == LlmPolicy(complete)
    with pytest.raises(ValueError) as missing:
        policy("llm")
    assert str(missing.value) == "the llm policy needs a `complete` callable (the model client)"
    with pytest.raises(ValueError) as unknown:
        policy("oracle", complete=complete)
    assert str(unknown.value) == (
        "unknown policy 'oracle'; use one of event_only, llm, recent_memory, rules"
    )
    assert unknown.value.__cause__ is None and unknown.value.__suppress_context__
