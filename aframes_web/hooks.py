"""Work a lower layer hands upward without importing the layer above (ARCHITECTURE.md, Layers).

Storing events, creating an import job and asking for compiles each set off background work that
only the pipeline (``aframes_web.pipeline``) knows how to queue; a benchmark run scores against a
labelling project's final labels, which only the annotation app reads. The module below declares
a :class:`Hook`; the app above provides the function when Django loads the apps. A hook that
nothing provides fails loudly instead of silently dropping the work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, ParamSpec, TypeVar

from django.core.exceptions import ImproperlyConfigured

P = ParamSpec("P")
R = TypeVar("R")


class Hook(Generic[P, R]):
    """One function slot: declared below, provided from above, called like the function."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._provided: Callable[P, R] | None = None

    def provide(self, handler: Callable[P, R]) -> None:
        self._provided = handler

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self._provided is None:
            raise ImproperlyConfigured(
                f"nothing handles {self.name!r}: add 'aframes_web.pipeline' to INSTALLED_APPS"
            )
        return self._provided(*args, **kwargs)
