"""Dashboard pages that audit ProactMem memory: the entity's memory, a closed day, a regularity
and a decision, each with its evidence linked.

Rows are made by hand so each page's content is known exactly. Every page is checked with the
three users: the owner and a viewer of the team see it, an outsider gets the same 404 as for
something that does not exist, and an anonymous visitor is sent to sign in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from aframes_web.streams.models import Entity, Event
from aframes_web.streams.services import entity_create
from memory import selectors
from memory.models import (
    STATE_RANK,
    Assessment,
    Citation,
    Decision,
    Fact,
    Regularity,
    RegularityTally,
    Segment,
    Trajectory,
    Transition,
)
from tests.conftest import need_service, regularity_states, signed_in
from tests.conftest import page_text as text

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 3, 2)
TUESDAY = date(2026, 3, 3)
RID = "reg:0123456789ab"
SECRET = "SECRET-GROUND-TRUTH"
BASE = "/t/acme/e/runner-1/memory"


def local(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=BERLIN)


def event(entity: Entity, at: datetime, name: str, value: float) -> Event:
    return Event.objects.create(
        entity=entity,
        occurred_at=at,
        kind="observation",
        source_key=f"{name}-{at.isoformat()}",
        monitor="",
        payload={"type": name, "value": value, "unit": "km", "private": {"label": SECRET}},
        received_at=timezone.now(),
    )


@dataclass
class Memory:
    entity: Entity
    events: list[Event]
    run: Segment
    rejected: Segment
    fact: Fact
    allowed: Decision
    suppressed: Decision


def close_day(entity: Entity, day: date, events: int, rejected: int = 0) -> Trajectory:
    return Trajectory.objects.create(
        entity=entity,
        day=day,
        event_count=events,
        segment_count=1 + rejected,
        rejected_count=rejected,
        fact_count=1,
    )


def identity(episode: str) -> list[Any]:
    return [episode, "remind_run", [RID]]


@pytest.fixture
def memory(team: Any) -> Memory:
    entity = entity_create(team=team, key="runner-1", scope="sports", timezone_name="Europe/Berlin")
    start, middle, later, decided = (
        event(entity, local(MONDAY, 7), "run_start", 0.0),
        event(entity, local(MONDAY, 7, 40), "run_end", 5.2),
        event(entity, local(TUESDAY, 7, 5), "run_start", 0.0),
        event(entity, local(TUESDAY, 9), "heart_rate", 61.0),
    )
    monday = close_day(entity, MONDAY, events=2, rejected=1)
    run = Segment.objects.create(
        trajectory=monday,
        index=0,
        kind="run",
        start=local(MONDAY, 7),
        end=local(MONDAY, 7, 40),
        accepted=True,
        cited_ids=[start.pk, middle.pk],
    )
    Citation.objects.bulk_create([Citation(segment=run, event=e) for e in (start, middle)])
    fact = Fact.objects.create(
        segment=run,
        entity=entity,
        ref=f"fact:{MONDAY.isoformat()}/0/f1",
        fact_id="f1",
        type="number",
        path=["distance_km"],
        value=5.2,
        at=local(MONDAY, 7, 40),
        grounded_event=middle,
        grounded_path=["value"],
    )
    rejected = Segment.objects.create(
        trajectory=monday,
        index=1,
        kind="nap",
        start=local(MONDAY, 13),
        end=local(MONDAY, 14),
        accepted=False,
        reason="cites event 999999, which is not an event of this day",
        cited_ids=[999999],
    )
    Fact.objects.create(
        segment=rejected,
        entity=entity,
        ref=f"fact:{MONDAY.isoformat()}/1/f1",
        fact_id="f1",
        type="number",
        path=["minutes"],
        value=60,
    )
    tuesday = close_day(entity, TUESDAY, events=2)
    morning = Segment.objects.create(
        trajectory=tuesday,
        index=0,
        kind="run",
        start=local(TUESDAY, 7, 5),
        end=local(TUESDAY, 7, 50),
        accepted=True,
        cited_ids=[later.pk],
    )
    Citation.objects.create(segment=morning, event=later)

    regularity = Regularity.objects.create(
        entity=entity,
        rid=RID,
        proposal={"trigger": "run_start", "behavior": "run_end", "window": ["07:00", "08:00"]},
        summary="After run_start on weekday mornings, run_end follows before 08:00",
        state=Regularity.State.ACTIVE,
        confidence=0.8125,
        replay_confidence=0.75,
        lift=1.9,
        n_f=3,
        n_v=1,
        observable=4,
        behavior_days=3,
        violation_run=0,
        proposed_on=MONDAY,
        last_day=TUESDAY,
    )
    outcomes = [
        (MONDAY, Assessment.Outcome.FULFILLED, [fact.ref]),
        (TUESDAY, Assessment.Outcome.VIOLATED, []),
        (date(2026, 3, 4), Assessment.Outcome.CENSORED, []),
        (date(2026, 3, 7), Assessment.Outcome.INAPPLICABLE, []),
        (date(2026, 3, 9), Assessment.Outcome.NOT_TRIGGERED, []),
    ]
    Assessment.objects.bulk_create(
        [Assessment(regularity=regularity, day=d, outcome=o, fact_refs=r) for d, o, r in outcomes]
    )
    Transition.objects.create(
        regularity=regularity,
        seq=0,
        day=MONDAY,
        from_state="",
        to_state="candidate",
        reason="proposed by the miner",
        fact_refs=[],
    )
    Transition.objects.create(
        regularity=regularity,
        seq=1,
        day=TUESDAY,
        from_state="candidate",
        to_state="active",
        reason="support reached the activation floor",
        fact_refs=[fact.ref],
    )

    common = {
        "entity": entity,
        "policy": "rules",
        "intent": "remind_run",
        "regularity_ids": [RID],
        "identity_key": "same-identity",
        "identity": identity("morning-run"),
        "signature": {"scope": "sports", "fields": [["type", ["str", "run_start"]]], "phase": None},
        "latency_ms": 1.5,
    }
    allowed = Decision.objects.create(
        **common,
        event=middle,
        occurred_at=middle.occurred_at,
        day=MONDAY,
        action="intervene",
        proposed_action="intervene",
        message="Your run usually ends by 08:00.",
        evidence=[f"event:{start.pk}", fact.ref, RID],
        control_reason="first",
    )
    suppressed = Decision.objects.create(
        **common,
        event=decided,
        occurred_at=decided.occurred_at,
        day=TUESDAY,
        action="abstain",
        proposed_action="intervene",
        message="",
        evidence=[
            f"event:{later.pk}",
            fact.ref,
            RID,
            "event:999999",
            "fact:2026-03-02/0/f9",
            "fact:2026-03-10/0/f1",
        ],
        retrieved=[
            {
                "id": RID,
                "occurrence": "deviated",
                "state": "active",
                "confidence": 0.8125,
                "deadline": local(TUESDAY, 8).isoformat(),
                "distance_s": 0.0,
                "facts": [fact.ref],
            }
        ],
        facts_seen=[
            {
                "ref": "fact:2026-03-10/0/f1",
                "path": ["run", "distance_km"],
                "value": 4.2,
                "at": local(TUESDAY, 7).isoformat(),
            }
        ],
        control_reason="repeat",
        suppressed=True,
        suppressed_by=identity("morning-run"),
    )
    tally(entity)
    return Memory(entity, [start, middle, later, decided], run, rejected, fact, allowed, suppressed)


def pages(m: Memory) -> list[str]:
    return [
        f"{BASE}/",
        f"{BASE}/d/{MONDAY.isoformat()}/",
        f"{BASE}/r/{RID}/",
        f"{BASE}/decision/{m.suppressed.pk}/",
        f"{BASE}/decisions/",
    ]


# --- Access -------------------------------------------------------------------------------------


def test_owner_and_member_see_every_page_an_outsider_gets_404(memory, owner, member, outsider):
    for user, status in ((owner, 200), (member, 200), (outsider, 404)):
        client = signed_in(user)
        for url in pages(memory):
            assert client.get(url).status_code == status, (user, url)


def test_anonymous_visitors_are_sent_to_sign_in(memory):
    for url in pages(memory):
        answer = Client().get(url)
        assert answer.status_code == 302 and answer["Location"].startswith("/login/"), url


def test_unknown_day_regularity_and_decision_are_404(memory, owner, team):
    client = signed_in(owner)
    other = entity_create(team=team, key="runner-2", scope="sports")
    elsewhere = event(other, local(MONDAY, 6), "run_start", 0.0)
    foreign = Decision.objects.create(
        entity=other,
        event=elsewhere,
        occurred_at=elsewhere.occurred_at,
        day=MONDAY,
        policy="rules",
        action="abstain",
        proposed_action="abstain",
        identity_key="x",
        identity=["", "", []],
        signature={"scope": "sports", "fields": [], "phase": None},
        control_reason="abstain",
        latency_ms=0.1,
    )
    for url in (
        f"{BASE}/d/2026-03-05/",  # not closed
        f"{BASE}/d/2026-02-30/",  # not a date
        f"{BASE}/r/reg:ffffffffffff/",
        f"{BASE}/decision/{foreign.pk}/",  # another entity's decision
        f"{BASE}/decision/999999/",
        "/t/acme/e/no-such-entity/memory/",
    ):
        assert client.get(url).status_code == 404, url


def test_private_payload_keys_are_never_rendered(memory, owner):
    client = signed_in(owner)
    for url in pages(memory):
        page = text(client.get(url))
        assert SECRET not in page and "private" not in page, url


# --- Entity memory --------------------------------------------------------------------------------


def figures_of(page: str) -> dict[str, tuple[str, str | None]]:
    """The summary's figures, each as its number and the link it carries (or None)."""
    found = {}
    for name, value in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page):
        link = re.fullmatch(r'<a href="(.*?)">(.*?)</a>', value)
        found[name] = (
            (link.group(2), link.group(1).replace("&amp;", "&")) if link else (value, None)
        )
    return found


def test_entity_memory_summarises_and_links_days_regularities_and_decisions(memory, owner):
    client = signed_in(owner)
    page = text(client.get(f"{BASE}/"))
    figures = figures_of(page)
    assert figures["Closed days"] == ("2", f"{BASE}/days/")
    assert figures["Regularities active"] == ("1", f"{BASE}/?state=active#regularities-h")
    assert figures["Regularities dormant"] == ("0", f"{BASE}/?state=dormant#regularities-h")
    assert figures["Decisions"] == ("2", f"{BASE}/decisions/")
    assert figures["Interventions"] == ("1", f"{BASE}/decisions/?action=intervene")
    for day in (MONDAY, TUESDAY):
        assert f'href="{BASE}/d/{day.isoformat()}/"' in page
    assert f'href="{BASE}/r/{RID}/"' in page
    assert "After run_start on weekday mornings" in page and "3 / 1" in page and "1.90" in page
    newest = page.index(f'href="{BASE}/decision/{memory.suppressed.pk}/"')
    assert newest < page.index(f'href="{BASE}/decision/{memory.allowed.pk}/"')
    assert "suppressed" in page


def test_the_summary_links_lead_to_lists_with_exactly_the_counted_rows(memory, owner):
    client = signed_in(owner)
    figures = figures_of(text(client.get(f"{BASE}/")))
    for name in ("Regularities active", "Decisions", "Interventions"):
        count, href = figures[name]
        listed = text(client.get(href.split("#")[0]))
        rows = re.findall(rf'href="{BASE}/(?:r/reg:|decision/)[^"]+"', listed.split("<tbody>")[1])
        assert len(rows) == int(count), name


def test_regularity_filter_swaps_only_the_table_under_htmx(memory, owner):
    client = signed_in(owner)
    dormant = text(client.get(f"{BASE}/?state=dormant"))
    assert "No regularities match these filters." in dormant and f"{BASE}/r/{RID}/" not in dormant
    partial = text(client.get(f"{BASE}/?state=active", headers={"HX-Request": "true"}))
    assert partial.lstrip().startswith('<div id="regularities">') and "<html" not in partial
    assert f"{BASE}/r/{RID}/" in partial
    wrong = text(client.get(f"{BASE}/?state=asleep"))
    assert "There is no state “asleep”" in wrong and f"{BASE}/r/{RID}/" in wrong


def many_regularities(entity: Entity, count: int) -> list[Regularity]:
    """``count`` regularities whose margin, lift and sentence tell them apart; every third is a
    habit, the rest active."""
    rows = []
    for n in range(count):
        rows.append(
            Regularity(
                entity=entity,
                rid=f"reg:{n:012x}",
                proposal={"n": n},
                summary=f"After step {n}, {'tea' if n % 2 else 'coffee'} in the kitchen.",
                state=Regularity.State.HABIT if n % 3 == 0 else Regularity.State.ACTIVE,
                confidence=0.5,
                replay_confidence=0.5,
                lift=1.0 + (count - n) / 100,  # the reverse of the margin's order
                n_f=3,
                n_v=1,
                observable=8,
                behavior_days=4,
                margin=n / 1000,
                violation_run=0,
                proposed_on=MONDAY,
            )
        )
    made = Regularity.objects.bulk_create(rows)
    tally(entity)
    return made


def tally(entity: Entity) -> None:
    """The state counts a day close keeps, for regularities these tests write by hand."""
    RegularityTally.objects.filter(entity=entity).delete()
    RegularityTally.objects.bulk_create(
        [
            RegularityTally(entity=entity, state=s, count=n)
            for s, n in regularity_states(entity).items()
        ]
    )


def listed_rids(page: str) -> list[str]:
    return re.findall(rf'href="{BASE}/r/(reg:[0-9a-f]+)/"', page)


def test_regularities_page_in_rank_order_active_before_habits(team, owner):
    entity = entity_create(team=team, key="runner-1", scope="sports", timezone_name="Europe/Berlin")
    many_regularities(entity, 120)
    client = signed_in(owner)
    first = text(client.get(f"{BASE}/"))
    shown = listed_rids(first)
    assert len(shown) == 50 and "page 1 of 3" in first
    active = [n for n in range(120) if n % 3]
    assert shown == [f"reg:{n:012x}" for n in sorted(active, reverse=True)[:50]]
    last = text(client.get(f"{BASE}/?page=3"))
    assert listed_rids(last) == [
        f"reg:{n:012x}" for n in sorted(range(0, 120, 3), reverse=True)[20:]
    ]
    beyond = text(client.get(f"{BASE}/?page=99"))  # past the end: the last page, not an error
    assert listed_rids(beyond) == listed_rids(last)


def test_rank_lists_what_predicts_before_habits_which_no_trigger_predicts(team, owner):
    entity = entity_create(team=team, key="runner-1", scope="sports", timezone_name="Europe/Berlin")
    rows = many_regularities(entity, 6)  # 0 and 3 are habits, the rest active
    Regularity.objects.filter(pk=rows[1].pk).update(state=Regularity.State.CANDIDATE, margin=0.0)
    Regularity.objects.filter(pk=rows[0].pk).update(margin=0.9)  # a habit's margin says nothing
    shown = listed_rids(text(signed_in(owner).get(f"{BASE}/")))
    assert shown == [f"reg:{n:012x}" for n in (5, 4, 2, 1, 0, 3)]


def test_the_list_shows_live_regularities_and_the_retired_under_their_state(team, owner):
    entity = entity_create(team=team, key="runner-1", scope="sports", timezone_name="Europe/Berlin")
    rows = many_regularities(entity, 70)
    retired = [r.pk for r in rows if r.pk % 5]
    Regularity.objects.filter(pk__in=retired).update(state=Regularity.State.RETIRED)
    tally(entity)
    live = {r.rid for r in rows if r.pk not in retired}
    client = signed_in(owner)
    page = text(client.get(f"{BASE}/"))
    said = "Every live regularity (retired ones are listed under their state)"
    assert f"{said}: {len(live)}." in page
    assert set(listed_rids(page)) == live
    assert '<option value="" selected>live (all but retired)</option>' in page
    figures = figures_of(page)
    assert figures["Regularities retired"] == (
        str(len(retired)),
        f"{BASE}/?state=retired#regularities-h",
    )
    first = text(client.get(f"{BASE}/?state=retired"))
    second = text(client.get(f"{BASE}/?state=retired&page=2"))
    shown = listed_rids(first) + listed_rids(second)
    assert f"Regularities in state retired: {len(retired)}; page 1 of 2." in first
    by_margin = sorted((r for r in rows if r.pk in retired), key=lambda r: -r.margin)
    assert shown == [r.rid for r in by_margin]


@pytest.mark.parametrize(
    ("state", "live"), [(None, False), (None, True), ("retired", False), ("habit", False)]
)
def test_a_list_in_rank_order_is_read_from_the_rank_index_without_sorting(team, state, live):
    """Every state, the live ones or one state, in rank order: a walk of ``regularity_rank``
    with no sort step, so a page costs the same whatever history lies beyond it."""
    need_service("PostgreSQL", connection.vendor == "postgresql")
    entity = entity_create(team=team, key="runner-1", scope="sports", timezone_name="Europe/Berlin")
    rows = selectors.regularities_for(entity, state, live=live)[:50]
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        # A test's few rows make any plan cheap: with scans of the table and sorting priced
        # out, the plan left shows whether the rank index can give the order by itself.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(r[0] for r in cursor.fetchall())
    assert "regularity_rank" in plan and "Sort" not in plan, plan


def test_the_database_keeps_each_regularity_s_rank_as_its_state_moves(team):
    entity = entity_create(team=team, key="runner-1", scope="sports", timezone_name="Europe/Berlin")
    made = many_regularities(entity, 3)
    Regularity.objects.filter(pk=made[1].pk).update(state=Regularity.State.RETIRED)
    ranks = dict(Regularity.objects.values_list("state", "state_rank"))
    assert ranks == {"habit": STATE_RANK.index("habit"), "active": 0, "retired": 5}


def test_the_page_shows_the_newest_closed_days_and_pages_every_one(team, owner):
    entity = entity_create(team=team, key="runner-1", scope="sports", timezone_name="Europe/Berlin")
    days = [MONDAY + timedelta(days=n) for n in range(130)]
    Trajectory.objects.bulk_create(
        [
            Trajectory(
                entity=entity, day=d, event_count=n, segment_count=1, rejected_count=0, fact_count=n
            )
            for n, d in enumerate(days)
        ]
    )
    client = signed_in(owner)
    page = text(client.get(f"{BASE}/"))
    section = page.split('id="days-h"')[1]
    listed = re.findall(rf'href="{BASE}/d/(\d{{4}}-\d\d-\d\d)/"', section)
    assert listed == [d.isoformat() for d in reversed(days[-31:])]
    assert f'The newest 31 of 130; <a href="{BASE}/days/">every closed day</a>' in section
    every = text(client.get(f"{BASE}/days/"))
    assert "130 closed days; page 1 of 2." in every
    first = re.findall(rf'href="{BASE}/d/(\d{{4}}-\d\d-\d\d)/"', every)
    assert first == [d.isoformat() for d in reversed(days[30:])]
    partial = text(client.get(f"{BASE}/days/?page=2", headers={"HX-Request": "true"}))
    assert partial.lstrip().startswith('<div id="days">') and "<html" not in partial
    rest = re.findall(rf'href="{BASE}/d/(\d{{4}}-\d\d-\d\d)/"', partial)
    assert rest == [d.isoformat() for d in reversed(days[:30])]
    assert text(client.get(f"{BASE}/days/?page=x")).count("page 1 of 2") == 1


def test_closed_days_of_another_teams_entity_are_not_found(team, outsider):
    entity_create(team=team, key="runner-1", scope="sports", timezone_name="Europe/Berlin")
    assert signed_in(outsider).get(f"{BASE}/days/").status_code == 404


def test_regularities_sort_filter_by_text_and_page_with_the_filters_kept(team, owner):
    entity = entity_create(team=team, key="runner-1", scope="sports", timezone_name="Europe/Berlin")
    many_regularities(entity, 120)
    client = signed_in(owner)
    by_lift = listed_rids(text(client.get(f"{BASE}/?sort=lift")))
    assert by_lift[:3] == ["reg:000000000000", "reg:000000000001", "reg:000000000002"]
    tea = text(client.get(f"{BASE}/?q=TEA&state=active", headers={"HX-Request": "true"}))
    assert "<html" not in tea and "containing “TEA”" in tea
    expected = [n for n in range(119, -1, -1) if n % 2 and n % 3]
    assert "Regularities in state active containing “TEA”: 40." in tea
    assert listed_rids(tea) == [f"reg:{n:012x}" for n in expected]
    coffee = text(client.get(f"{BASE}/?q=coffee&sort=support"))
    nxt = re.search(r'href="([^"]*page=2[^"]*)"', coffee)
    assert nxt is not None
    link = nxt.group(1).replace("&amp;", "&")
    assert "q=coffee" in link and "sort=support" in link
    second = text(client.get(link.split("#")[0]))
    assert all(
        "coffee" in s for s in re.findall(r"After step \d+, \w+", second.split("<tbody>")[1])
    )
    nothing = text(client.get(f"{BASE}/?q=cocoa"))
    assert "No regularities match these filters." in nothing
    bad = text(client.get(f"{BASE}/?sort=mood&page=0"))
    assert "Select a valid choice" in bad and len(listed_rids(bad)) == 50


# --- Decisions list -----------------------------------------------------------------------------


def decision_ids(page: str) -> list[int]:
    return [int(i) for i in re.findall(rf'href="{BASE}/decision/(\d+)/"', page)]


def test_decisions_list_filters_by_action_and_days(memory, owner):
    client = signed_in(owner)
    every = text(client.get(f"{BASE}/decisions/"))
    assert decision_ids(every) == [memory.suppressed.pk, memory.allowed.pk]
    assert "Your run usually ends by 08:00." in every
    assert decision_ids(text(client.get(f"{BASE}/decisions/?action=intervene"))) == [
        memory.allowed.pk
    ]
    assert decision_ids(text(client.get(f"{BASE}/decisions/?action=abstain"))) == [
        memory.suppressed.pk
    ]
    tuesday = f"{BASE}/decisions/?since={TUESDAY.isoformat()}"
    assert decision_ids(text(client.get(tuesday))) == [memory.suppressed.pk]
    monday = f"{BASE}/decisions/?until={MONDAY.isoformat()}"
    assert decision_ids(text(client.get(monday))) == [memory.allowed.pk]
    none = text(client.get(f"{BASE}/decisions/?action=intervene&since={TUESDAY.isoformat()}"))
    assert decision_ids(none) == [] and "No decisions match these filters." in none
    partial = text(client.get(f"{BASE}/decisions/?action=abstain", headers={"HX-Request": "true"}))
    assert partial.lstrip().startswith('<div id="decisions">') and "<html" not in partial


def test_decisions_list_explains_bad_filters_and_shows_the_rest(memory, owner):
    client = signed_in(owner)
    swapped = text(
        client.get(f"{BASE}/decisions/?since={TUESDAY.isoformat()}&until={MONDAY.isoformat()}")
    )
    assert "The last day comes before the first: swap them." in swapped
    assert decision_ids(swapped) == [memory.suppressed.pk]  # the valid bound still applies
    bad = text(client.get(f"{BASE}/decisions/?action=shout&since=yesterday"))
    assert "Select a valid choice" in bad and "Enter a valid date." in bad
    assert decision_ids(bad) == [memory.suppressed.pk, memory.allowed.pk]


def test_decisions_list_pages_newest_first(memory, owner):
    common = {
        f: getattr(memory.allowed, f)
        for f in ("entity", "policy", "intent", "identity_key", "identity", "signature")
    }
    for n in range(60):
        at = local(TUESDAY, 10) + timedelta(minutes=n)
        Decision.objects.create(
            **common,
            event=event(memory.entity, at, "heart_rate", 60.0 + n),
            occurred_at=at,
            day=TUESDAY,
            action="abstain",
            proposed_action="abstain",
            control_reason="no_intervention",
            latency_ms=1.0,
        )
    client = signed_in(owner)
    first = text(client.get(f"{BASE}/decisions/?action=abstain"))
    assert "61 decisions; page 1 of 2." in first and len(decision_ids(first)) == 50
    second = text(client.get(f"{BASE}/decisions/?action=abstain&page=2"))
    ids = decision_ids(first) + decision_ids(second)
    assert len(ids) == 61 and ids[-1] == memory.suppressed.pk
    assert ids == sorted(ids, reverse=True)
    assert "action=abstain&amp;page=1" in second


def test_entity_and_team_pages_link_to_memory_for_every_scope(memory, owner):
    client = signed_in(owner)
    assert f'href="{BASE}/"' in text(client.get("/t/acme/"))
    assert f'href="{BASE}/"' in text(client.get("/t/acme/e/runner-1/"))


# --- Trajectory ---------------------------------------------------------------------------------


def test_trajectory_links_facts_to_their_grounding_events(memory, owner):
    page = text(signed_in(owner).get(f"{BASE}/d/{MONDAY.isoformat()}/"))
    start, middle = memory.events[:2]
    # The fact carries its ref as anchor (what decisions cite) and links to its event.
    row = re.search(rf'<tr id="{re.escape(memory.fact.ref)}">.*?</tr>', page, re.S).group(0)
    assert "distance_km" in row and "5.2" in row and "07:40:00" in row  # local time
    assert f'<a href="#s0-event-{middle.pk}">event {middle.pk}</a>' in row
    # Both cited events are listed with their anchors and compact payloads.
    for e in (start, middle):
        assert f'id="s0-event-{e.pk}"' in page
    assert "run_end" in page and "&quot;value&quot;: 5.2" in page
    assert "07:00:00–07:40:00" in page
    assert f'href="{BASE}/d/{TUESDAY.isoformat()}/" rel="next"' in page


def test_rejected_segment_shows_its_reason_and_is_marked(memory, owner):
    page = text(signed_in(owner).get(f"{BASE}/d/{MONDAY.isoformat()}/"))
    section = re.search(r'<section id="segment-1".*?</section>', page, re.S).group(0)
    assert 'class="segment rejected verdict mismatch"' in section
    assert "<strong>Rejected:</strong> cites event 999999, which is not an event" in section
    assert "Cited but not stored for this entity: <code>event:999999</code>" in section
    accepted = re.search(r'<section id="segment-0".*?</section>', page, re.S).group(0)
    assert "rejected" not in accepted


def test_desktop_segment_links_to_its_frame(team, owner):
    laptop = entity_create(team=team, key="alice-laptop", scope="desktop")
    day = close_day(laptop, MONDAY, events=0)
    Segment.objects.create(
        trajectory=day,
        index=0,
        kind="frame",
        source="f0003",
        start=local(MONDAY, 9),
        end=local(MONDAY, 10),
        accepted=True,
    )
    page = text(signed_in(owner).get(f"/t/acme/e/alice-laptop/memory/d/{MONDAY.isoformat()}/"))
    assert 'href="/t/acme/e/alice-laptop/f/f0003/">frame <code>f0003</code>' in page


# --- Regularity ---------------------------------------------------------------------------------


def test_regularity_calendar_colours_every_outcome_and_links_closed_days(memory, owner):
    page = text(signed_in(owner).get(f"{BASE}/r/{RID}/"))
    assert "<h1>After run_start on weekday mornings, run_end follows before 08:00</h1>" in page
    assert "now <strong>active</strong>" in page
    for outcome in Assessment.Outcome.values:
        assert f'data-outcome="{outcome}"' in page, outcome
    # Closed days link to their trajectory, with the outcome they had.
    assert re.search(rf'<a href="{BASE}/d/{MONDAY.isoformat()}/" data-outcome="fulfilled">', page)
    assert re.search(rf'<a href="{BASE}/d/{TUESDAY.isoformat()}/" data-outcome="violated">', page)
    # A day without a trajectory is coloured but not a link.
    assert '<g data-outcome="censored">' in page
    # Every day of the span is drawn: 2026-03-02 (Mon) to 2026-03-09 (Mon) is 8 days.
    assert page.count("<rect ") == 8
    legend = re.search(r'<ul class="legend plain">.*?</ul>', page, re.S).group(0)
    for words in ("fulfilled:", "violated:", "censored:", "inapplicable:", "not triggered:"):
        assert words in legend
    assert "— 1 day<" in legend


def test_regularity_lifecycle_lists_transitions_with_their_facts(memory, owner):
    page = text(signed_in(owner).get(f"{BASE}/r/{RID}/"))
    table = re.search(r'<table class="transitions">.*?</table>', page, re.S).group(0)
    rows = re.findall(r"<tr><td>.*?</tr>", table, re.S)
    assert len(rows) == 2
    assert "— → candidate" in rows[0] and "proposed by the miner" in rows[0]
    assert "candidate → active" in rows[1] and "support reached the activation floor" in rows[1]
    fact_href = f"{BASE}/d/{MONDAY.isoformat()}/#{memory.fact.ref}"
    assert f'<a href="{fact_href}"><code>{memory.fact.ref}</code></a>' in rows[1]
    assert f'<a href="{BASE}/d/{TUESDAY.isoformat()}/">2026-03-03</a>' in rows[1]


# --- Decision -----------------------------------------------------------------------------------


def test_decision_resolves_each_evidence_id(memory, owner):
    page = text(signed_in(owner).get(f"{BASE}/decision/{memory.suppressed.pk}/"))
    later = memory.events[2]
    evidence = re.search(r'<ul class="evidence">.*?</ul>\s*</section>', page, re.S).group(0)
    items = dict(re.findall(r'<li data-ref="([^"]+)">(.*?)</li>', evidence, re.S))
    # An event is shown inline.
    assert f'id="evidence-event-{later.pk}"' in items[f"event:{later.pk}"]
    assert "run_start" in items[f"event:{later.pk}"]
    # A fact links to its trajectory day, anchored on the fact.
    fact_href = f"{BASE}/d/{MONDAY.isoformat()}/#{memory.fact.ref}"
    assert f'href="{fact_href}"' in items[memory.fact.ref]
    assert "distance_km" in items[memory.fact.ref]
    # A regularity links to its page.
    assert f'href="{BASE}/r/{RID}/"' in items[RID]
    # What cannot be resolved says so.
    assert "no such event of this entity" in items["event:999999"]
    assert "no such fact stored" in items["fact:2026-03-02/0/f9"]
    # A fact of a day not closed yet (today, as a decision sees it) is not stored until it is.
    assert "2026-03-10 is not closed yet" in items["fact:2026-03-10/0/f1"]
    # ... and it shows the fact as the decision saw it.
    assert "as the decision saw it" in items["fact:2026-03-10/0/f1"]
    assert (
        "run.distance_km" in items["fact:2026-03-10/0/f1"]
        and "4.2" in items["fact:2026-03-10/0/f1"]
    )


def test_decision_shows_the_event_policy_intent_and_retrieved_regularities(memory, owner):
    page = text(signed_in(owner).get(f"{BASE}/decision/{memory.allowed.pk}/"))
    middle = memory.events[1]
    assert f"<h1>Decision #{memory.allowed.pk}: intervene</h1>" in page
    decided = re.search(r'<section aria-labelledby="event-h">.*?</section>', page, re.S).group(0)
    assert f'id="decided-event-{middle.pk}"' in decided and "run_end" in decided
    assert "<code>rules</code>" in page and "remind_run" in page
    assert "Your run usually ends by 08:00." in page
    assert "No regularity was retrieved for this moment." in page
    assert "Suppressed</strong>" not in page

    suppressed = text(signed_in(owner).get(f"{BASE}/decision/{memory.suppressed.pk}/"))
    retrieved = re.search(r'<table class="retrieved">.*?</table>', suppressed, re.S).group(0)
    assert f'href="{BASE}/r/{RID}/"' in retrieved and "<strong>deviated</strong>" in retrieved


def test_suppressed_decision_links_to_the_allowed_one_with_its_identity(memory, owner):
    page = text(signed_in(owner).get(f"{BASE}/decision/{memory.suppressed.pk}/"))
    assert "(suppressed: proposed intervene)" in page
    control = re.search(r'<section aria-labelledby="control-h">.*?</section>', page, re.S).group(0)
    assert "<code>repeat</code>" in control
    # The stored canonical key ["str", "run_start"] is shown as the value it stands for.
    assert '<th scope="row">signature: type</th><td>run_start</td>' in control
    assert "[&quot;str&quot;" not in page and '["str"' not in page
    block = re.search(r'<div class="verdict mismatch suppressed">.*?</div>', control, re.S).group(0)
    assert "episode <code>morning-run</code>, intent <code>remind_run</code>" in block
    assert f'<a href="{BASE}/r/{RID}/"><code>{RID}</code></a>' in block
    assert f'<a href="{BASE}/decision/{memory.allowed.pk}/">#{memory.allowed.pk}</a>' in block


def test_a_decision_said_in_place_of_a_repeat_names_the_repeat_and_links_what_it_repeated(
    memory, owner
):
    entity = memory.entity
    at = event(entity, local(TUESDAY, 9), "sitting", 57.0)
    instead = Decision.objects.create(
        entity=entity,
        event=at,
        occurred_at=at.occurred_at,
        day=TUESDAY,
        policy="rules",
        action="intervene",
        proposed_action="intervene",
        intent="stand_break",
        message="You have been sitting for 57 of the last 60 minutes.",
        identity_key="stand-identity",
        identity=["sitting@slot1", "stand_break", []],
        signature={"scope": "sports", "fields": [], "phase": None},
        control_reason="first",
        instead_of={
            "intent": "remind_run",
            "message": "Your run usually ends by 08:00.",
            "identity": identity("morning-run"),
            "identity_key": "same-identity",
            "suppressed_by": identity("morning-run"),
        },
        latency_ms=0.1,
    )
    page = text(signed_in(owner).get(f"{BASE}/decision/{instead.pk}/"))
    block = re.search(r'<div class="verdict instead-of">.*?</div>', page, re.S).group(0)
    assert "<code>remind_run</code>" in block and "Your run usually ends by 08:00." in block
    assert "episode <code>morning-run</code>" in block
    assert f'<a href="{BASE}/r/{RID}/"><code>{RID}</code></a>' in block
    # The repeat's allowed decision is found by the key the decision keeps.
    assert f'<a href="{BASE}/decision/{memory.allowed.pk}/">#{memory.allowed.pk}</a>' in block
    assert "Suppressed</strong>" not in page
    # A decision that is its first proposal says nothing of the kind.
    plain = text(signed_in(owner).get(f"{BASE}/decision/{memory.allowed.pk}/"))
    assert "instead-of" not in plain


def test_allowed_decision_is_the_newest_earlier_intervention_with_the_identity(memory):
    from memory.selectors import allowed_decision_for

    entity = memory.entity
    assert allowed_decision_for(entity, memory.suppressed) == memory.allowed
    # A later intervention with the same identity is not what an earlier decision repeated.
    later = event(entity, local(TUESDAY, 12), "run_start", 0.0)
    Decision.objects.create(
        entity=entity,
        event=later,
        occurred_at=later.occurred_at,
        day=TUESDAY,
        policy="rules",
        action="intervene",
        proposed_action="intervene",
        identity_key="same-identity",
        identity=identity("morning-run"),
        signature={"scope": "sports", "fields": [], "phase": None},
        control_reason="new_signature",
        latency_ms=0.1,
    )
    assert allowed_decision_for(entity, memory.suppressed) == memory.allowed
    nearer = event(entity, local(TUESDAY, 8), "run_start", 0.0)
    between = Decision.objects.create(
        entity=entity,
        event=nearer,
        occurred_at=nearer.occurred_at,
        day=TUESDAY,
        policy="rules",
        action="intervene",
        proposed_action="intervene",
        identity_key="same-identity",
        identity=identity("morning-run"),
        signature={"scope": "sports", "fields": [], "phase": None},
        control_reason="new_signature",
        latency_ms=0.1,
    )
    assert allowed_decision_for(entity, memory.suppressed) == between
    assert memory.suppressed.occurred_at - between.occurred_at == timedelta(hours=1)


# --- Memory the services made -------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)  # decide runs durable transactions
def test_every_page_renders_memory_made_by_the_services(team, owner):
    from memory.services.deciding import decide_batch
    from tests.home_streams import START, motion, routine_day, stream

    home = entity_create(team=team, key="flat-1", scope="home", timezone_name="Europe/Paris")
    decide_batch(entity=home, items=stream(6))
    deviation = START + timedelta(days=6)
    extra = [motion(deviation, 8, m, "study", m) for m in (15, 20, 25)]
    items = sorted(routine_day(deviation, kitchen=False) + extra, key=lambda i: i["occurred_at"])
    decide_batch(entity=home, items=items)
    suppressed = Decision.objects.filter(entity=home, suppressed=True).first()
    assert suppressed is not None

    client = signed_in(owner)
    base = "/t/acme/e/flat-1/memory"
    urls = [f"{base}/"]
    urls += [f"{base}/d/{d.isoformat()}/" for d in home.trajectories.values_list("day", flat=True)]
    urls += [f"{base}/r/{rid}/" for rid in home.regularities.values_list("rid", flat=True)]
    urls += [f"{base}/decision/{pk}/" for pk in home.decisions.values_list("pk", flat=True)]
    for url in urls:
        page = text(client.get(url))
        assert "secret-label" not in page and "private" not in page, url
    page = text(client.get(f"{base}/decision/{suppressed.pk}/"))
    allowed = Decision.objects.filter(
        entity=home, identity_key=suppressed.identity_key, action="intervene"
    ).order_by("occurred_at")
    assert f'href="{base}/decision/{allowed.last().pk}/"' in page
