"""ActivityWatch rows stored under the reader's earlier ids take the ids derived from the events.

The reader once numbered rows by the position of their bucket among the export's buckets (b) and
of their event in its bucket (e): id ``(b + 1) * 10^14 + e * 10^5 + k``. It now numbers each
event from its own start (see :mod:`compiler.sources.activitywatch`). A stored row's key is
rewritten to what the reader now gives it, so importing or syncing the same export again adds
nothing: k is the old id's low part, the event's start is the row's time less k heartbeats, and
the events of an entity are numbered as the reader numbers them (by start, then bucket, then
position; b and e order them as bucket id and time did). An AFK event merged into an earlier
overlapping one left no row, so a number it took from a neighbour in the same second
cannot be known; a row whose new key is already taken keeps its old key. Documents cite these
rows by their event ids until their day is compiled again.
"""

from datetime import UTC, datetime

from django.db import migrations

EVENT_STRIDE = 10**5
HEARTBEAT_US = 30_000_000
BATCH = 2_000


def _start(occurred_at: datetime, k: int) -> int:
    """The row's event's start in microseconds (Unix time)."""
    moment = occurred_at.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    start_us = (moment.days * 86_400 + moment.seconds) * 1_000_000 + moment.microseconds
    return start_us - k * HEARTBEAT_US


def _rows(Event, entity_id):
    """(pk, prefix, old id, time) of the entity's rows under old keys, in pk order, batched."""
    rows = Event.objects.filter(entity_id=entity_id, source_key__regex=r"^aw:[sa][0-9]{15}$")
    last = 0
    while True:
        batch = list(
            rows.filter(pk__gt=last)
            .order_by("pk")
            .values_list("pk", "source_key", "occurred_at")[:BATCH]
        )
        if not batch:
            return
        last = batch[-1][0]
        for pk, key, occurred_at in batch:
            yield pk, key[:4], int(key[4:]), occurred_at


def rekey(apps, schema_editor):
    Event = apps.get_model("streams", "Event")
    entities = (
        Event.objects.filter(source_key__regex=r"^aw:[sa][0-9]{15}$")
        .values_list("entity_id", flat=True)
        .distinct()
    )
    for entity_id in list(entities):
        # Each old event (b, e) and its start, from any of its rows; numbered by (whole second,
        # start, b, e) as the reader numbers them.
        starts: dict[int, int] = {}
        for _pk, prefix, old, occurred_at in _rows(Event, entity_id):
            k = old % EVENT_STRIDE if prefix == "aw:s" else 0
            starts.setdefault(old // EVENT_STRIDE, _start(occurred_at, k))
        given: dict[int, int] = {}
        previous = -1
        for second, _us, event in sorted((us // 1_000_000, us, e) for e, us in starts.items()):
            previous = max(second, previous + 1)
            given[event] = previous
        for pk, prefix, old, _at in list(_rows(Event, entity_id)):
            k = old % EVENT_STRIDE if prefix == "aw:s" else 0
            new_key = f"{prefix}{given[old // EVENT_STRIDE] * EVENT_STRIDE + k}"
            if not Event.objects.filter(entity_id=entity_id, source_key=new_key).exists():
                Event.objects.filter(pk=pk).update(source_key=new_key)


class Migration(migrations.Migration):
    dependencies = [("streams", "0004_event_absence_index")]

    operations = [migrations.RunPython(rekey, migrations.RunPython.noop)]
