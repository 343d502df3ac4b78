"""Lookups by key whose SQL the ORM builds once per process, run with new values each time.

Every API request reads the same few rows by key (its token and team, its entity, the
entity's tally of events). Building a QuerySet and compiling it to SQL costs Django several
times the CPU that PostgreSQL spends answering such a lookup by a unique index: measured on a
cached context read, the three lookups took about 1.9 ms of CPU of the request's 3.3, most
of it in ``QuerySet.filter`` and ``SQLCompiler.as_sql``. A :class:`Lookup` asks the ORM for
the statement once, with marker values in the key's places, and afterwards only binds the
values and turns the row into model instances (``Model.from_db``, with the ORM's own
converters), so the SQL and the mapping stay the ORM's and follow the models.

Not for anything that varies in shape (filters that come and go, orderings, pages): those
stay QuerySets.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from django.db import connections, models

M = TypeVar("M", bound=models.Model)


class Lookup(Generic[M]):
    """The one ``model`` row whose ``keys`` (attribute names: ``prefix``, ``team_id``) equal
    the values given, with the rows it names through the foreign keys in ``related`` attached
    as ``select_related`` would; None where there is none. ``keys`` must select one row at
    most (a unique field or set of fields)."""

    def __init__(self, model: type[M], keys: Sequence[str], related: Sequence[str] = ()) -> None:
        self.model = model
        self.keys = tuple(keys)
        self.related = tuple(related)
        self._compiled: dict[tuple[str, str], _Compiled] = {}
        self._lock = threading.Lock()

    def __call__(self, **values: Any) -> M | None:
        if set(values) != set(self.keys):
            raise TypeError(f"{self.model.__name__} lookup takes {self.keys}, got {tuple(values)}")
        alias = self.model._default_manager.db
        connection = connections[alias]
        compiled = self._compiled.get((alias, connection.vendor)) or self._compile(alias)
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, [values[key] for key in compiled.params])
            row = cursor.fetchone()
        if row is None:
            return None
        row = list(row)
        for position, (converters, expression) in compiled.converters:
            value = row[position]
            for converter in converters:
                value = converter(value, expression, connection)
            row[position] = value
        found = self.model.from_db(alias, compiled.names[0], row[: compiled.ends[0]])
        for path, names, start, end in zip(
            self.related, compiled.names[1:], compiled.ends[:-1], compiled.ends[1:], strict=True
        ):
            field = self.model._meta.get_field(path)
            target = field.related_model
            field.set_cached_value(found, target.from_db(alias, names, row[start:end]))  # type: ignore[union-attr]
        return found

    def _compile(self, alias: str) -> _Compiled:
        with self._lock:
            connection = connections[alias]
            key = (alias, connection.vendor)
            if key not in self._compiled:
                self._compiled[key] = _Compiled.build(self, alias)
            return self._compiled[key]


class _Compiled:
    """One lookup's statement on one database: its SQL, which key each parameter binds, the
    columns of each model in the row, and the ORM's converters of those columns."""

    def __init__(
        self,
        sql: str,
        params: tuple[str, ...],
        names: list[list[str]],
        ends: list[int],
        converters: list[tuple[int, Any]],
    ) -> None:
        self.sql, self.params, self.names, self.ends = sql, params, names, ends
        self.converters = converters

    @classmethod
    def build(cls, lookup: Lookup[Any], alias: str) -> _Compiled:
        model = lookup.model
        markers = {key: _marker(model, key, number) for number, key in enumerate(lookup.keys)}
        names = [[field.attname for field in model._meta.concrete_fields]]
        columns = list(names[0])
        for path in lookup.related:
            target = model._meta.get_field(path).related_model
            own = [field.attname for field in target._meta.concrete_fields]  # type: ignore[union-attr]
            names.append(own)
            columns += [f"{path}__{name}" for name in own]
        ends, total = [], 0
        for group in names:
            total += len(group)
            ends.append(total)
        query = (
            model._default_manager.using(alias)
            .filter(**markers)
            .order_by()
            .values_list(*columns)[:1]
            .query
        )
        compiler = query.get_compiler(using=alias)
        sql, values = compiler.as_sql()
        by_marker = {marker: key for key, marker in markers.items()}
        if len(values) != len(markers) or set(values) != set(by_marker):
            raise ValueError(
                f"{model.__name__} lookup by {lookup.keys}: the compiled statement binds "
                f"{values!r}, not each key once"
            )
        selected = [entry[0] for entry in compiler.select[: compiler.col_count]]
        converters = list(compiler.get_converters(selected).items())
        return cls(sql, tuple(by_marker[value] for value in values), names, ends, converters)


def _marker(model: type[models.Model], attname: str, number: int) -> Any:
    """A value for the key ``attname`` that no real parameter of the statement equals."""
    field = next(f for f in model._meta.concrete_fields if f.attname == attname)
    if isinstance(field, models.IntegerField | models.ForeignKey | models.AutoField):
        return -987_654_321 - number
    if isinstance(field, models.CharField | models.TextField | models.SlugField):
        return f"\x1flookup-key-{number}\x1f"
    raise TypeError(f"{model.__name__}.{attname}: a Lookup key must be an integer or text field")
