"""The Aframes REST API over ``urllib.request``: post a batch, create an entity.

Failures are sorted into what a retry may cure (:class:`Unavailable`: the network, 5xx, 429)
and what it will not (:class:`Refused`: a bad token, an invalid batch, a missing entity).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

USER_AGENT = "aframes-sync/0.1"


class Unavailable(Exception):
    """The server could not be reached or asked us to come back later."""


class Refused(Exception):
    """The server answered, and re-sending the same request will not help."""

    def __init__(self, status: int, message: str, body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body or {}


@dataclass
class Ack:
    accepted: int = 0
    duplicates: int = 0
    dropped_text_fields: int = 0

    def add(self, other: Ack) -> None:
        self.accepted += other.accepted
        self.duplicates += other.duplicates
        self.dropped_text_fields += other.dropped_text_fields


class Client:
    def __init__(self, url: str, token: str, *, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self._token = token  # never printed: not in repr, messages or logs
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"Client({self.url!r})"

    def _request(self, method: str, path: str, body: Any) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(body, ensure_ascii=False).encode(),
            method=method,
            headers={
                "Authorization": f"Bearer {self._token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
                "User-Agent": USER_AGENT,
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, _json(response.read())
        except urllib.error.HTTPError as err:
            status, data = err.code, _json(err.read())
            err.close()
            if status == 429 or status >= 500:
                raise Unavailable(f"the server answered {status}") from None
            raise Refused(status, _detail(status, data), data) from None
        except (urllib.error.URLError, OSError) as err:
            # Refused connections, resets, timeouts and a response cut short all land here.
            reason = getattr(err, "reason", None) or err
            raise Unavailable(f"cannot reach {self.url} ({reason})") from None
        except ValueError as err:  # http.client's own protocol errors
            raise Unavailable(f"a broken answer from {self.url} ({err})") from None

    def post_events(self, entity: str, records: list[dict[str, Any]]) -> Ack:
        _status, data = self._request(
            "POST", f"/api/v1/entities/{quote(entity, safe='')}/events", records
        )
        return Ack(
            int(data.get("accepted", 0)),
            int(data.get("duplicates", 0)),
            int(data.get("dropped_text_fields", 0)),
        )

    def create_entity(self, key: str, scope: str, timezone: str) -> None:
        try:
            self._request(
                "POST", "/api/v1/entities", {"key": key, "scope": scope, "timezone": timezone}
            )
        except Refused as err:
            if err.status != 409:  # 409: it exists already (another agent was quicker)
                raise


def _json(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _detail(status: int, data: dict[str, Any]) -> str:
    detail = data.get("detail") or f"HTTP {status}"
    errors = data.get("errors")
    if isinstance(errors, list) and errors:
        shown = "; ".join(json.dumps(e, ensure_ascii=False) for e in errors[:3])
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        detail = f"{detail} {shown}{more}"
    return f"{status}: {detail}"
