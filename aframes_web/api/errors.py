"""One error shape for the API: ``{"detail": ..., "errors": [...]?}``."""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "detail" not in response.data:
        # Field errors from serializers: keep them, and add a one-line summary.
        response.data = {"detail": "The request has invalid fields.", "fields": response.data}
    return response
