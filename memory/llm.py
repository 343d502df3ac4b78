"""The optional LLM: an OpenAI-compatible chat-completions client, recorded, cached, fail-closed.

Configured by ``LLM_BASE_URL`` (e.g. ``http://127.0.0.1:8080/v1``), ``LLM_MODEL`` and
``LLM_API_KEY``, with ``LLM_TIMEOUT_S`` seconds for a call; nothing needs it. Every call is
made at temperature 0 and recorded
(:class:`memory.models.LlmCall`: prompt hash, tokens, latency, reply or error); a prompt asked
before is answered from the record, so a replay is reproducible and free. Any failure raises
:class:`LlmUnavailable`, which the LLM policies turn into an abstention (they fail closed).

Spend is bounded: each team may make ``AFRAMES_LLM_CALLS_PER_HOUR`` calls to the model in any
hour (answers from the record are free); past it, calls fail closed until the hour rolls on.
What a failure says to API clients is generic (which kind of failure, never the endpoint or
its answer); the detail is kept in the call's record for operators. Redirects are never
followed, so the API key is sent to the configured endpoint only.
"""

from __future__ import annotations

import hashlib
import json
import time
import urllib.error
import urllib.request
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from memory.models import LlmCall


class LlmUnavailable(RuntimeError):
    """No model is configured, the budget is spent, or the call failed.

    ``str()`` is what a client may read (which kind of failure); ``detail`` is for operators
    (the endpoint and what it answered) and is kept in the call's record only.
    """

    def __init__(self, public: str, detail: str = "") -> None:
        super().__init__(public)
        self.detail = detail or public


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A 3xx answer is an error: following it could send the API key to another host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects())


def configured() -> bool:
    return bool(settings.LLM_BASE_URL and settings.LLM_MODEL)


def prompt_hash(model: str, prompt: str) -> str:
    return hashlib.sha256(f"{model}\n{prompt}".encode()).hexdigest()


def complete(prompt: str, *, entity: Any = None) -> str:
    """The model's reply text to ``prompt`` (one user message), from the record if asked before.

    ``entity`` scopes the record: a prompt holds the entity's payloads, so its record is kept
    with the entity (and deleted with it) and never answers another entity's prompt.
    """
    if not configured():
        raise LlmUnavailable("no LLM is configured: set LLM_BASE_URL and LLM_MODEL")
    model = settings.LLM_MODEL
    digest = prompt_hash(model, prompt)
    cached = (
        LlmCall.objects.filter(model=model, prompt_hash=digest, ok=True, entity=entity)
        .values_list("reply", flat=True)
        .first()
    )
    if cached is not None:
        return cached
    _within_budget(entity)
    began = time.perf_counter()
    try:
        body = _post(model, prompt)
        reply = body["choices"][0]["message"]["content"]
        if not isinstance(reply, str):
            raise LlmUnavailable(
                "the LLM's reply was not text", f"content is {type(reply).__name__}"
            )
    except LlmUnavailable as err:
        _record(entity, model, digest, prompt, began, error=err.detail)
        raise
    except (KeyError, IndexError, TypeError) as err:
        _record(entity, model, digest, prompt, began, error=f"{type(err).__name__}: {err}")
        raise LlmUnavailable("the LLM's reply was not a chat completion") from None
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    _record(
        entity,
        model,
        digest,
        prompt,
        began,
        reply=reply,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
    )
    return reply


def calls_last_hour(entity: Any) -> int:
    """Calls made to the model (not answers from the record) for the entity's team in the
    last hour; calls for no entity count together."""
    since = timezone.now() - timedelta(hours=1)
    calls = LlmCall.objects.filter(created_at__gte=since)
    if entity is None:
        return calls.filter(entity__isnull=True).count()
    return calls.filter(entity__team_id=entity.team_id).count()


def _within_budget(entity: Any) -> None:
    budget = settings.AFRAMES_LLM_CALLS_PER_HOUR
    if calls_last_hour(entity) >= budget:
        raise LlmUnavailable(
            f"the team's LLM budget of {budget} calls an hour is spent; LLM decisions abstain "
            "until it refills (AFRAMES_LLM_CALLS_PER_HOUR)"
        )


def _post(model: str, prompt: str) -> dict[str, Any]:
    url = settings.LLM_BASE_URL.rstrip("/") + "/chat/completions"
    payload = {
        "model": model,
        "temperature": 0,
        "messages": [{"role": "user", "content": prompt}],
    }
    headers = {"Content-Type": "application/json"}
    if settings.LLM_API_KEY:
        headers["Authorization"] = f"Bearer {settings.LLM_API_KEY}"
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers=headers, method="POST"
    )
    try:
        with _OPENER.open(request, timeout=settings.LLM_TIMEOUT_S) as answer:
            data = json.loads(answer.read())
    except urllib.error.HTTPError as err:
        where = f" to {err.headers.get('Location')}" if 300 <= err.code < 400 else ""
        raise LlmUnavailable(
            f"the LLM endpoint answered HTTP {err.code}", f"{url} answered HTTP {err.code}{where}"
        ) from None
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        raise LlmUnavailable(
            "the LLM endpoint could not be reached", f"{url} could not be reached: {err}"
        ) from None
    except ValueError:
        raise LlmUnavailable("the LLM endpoint did not answer JSON", f"{url}: not JSON") from None
    if not isinstance(data, dict):
        raise LlmUnavailable(
            "the LLM endpoint did not answer a JSON object", f"{url}: {type(data).__name__}"
        )
    return data


def _record(
    entity: Any,
    model: str,
    digest: str,
    prompt: str,
    began: float,
    *,
    reply: str = "",
    error: str = "",
    prompt_tokens: Any = None,
    completion_tokens: Any = None,
) -> None:
    LlmCall.objects.create(
        entity=entity,
        model=model,
        prompt_hash=digest,
        prompt=prompt,
        reply=reply,
        ok=not error,
        error=error[:2000],
        prompt_tokens=prompt_tokens if isinstance(prompt_tokens, int) else None,
        completion_tokens=completion_tokens if isinstance(completion_tokens, int) else None,
        latency_ms=round((time.perf_counter() - began) * 1000, 3),
    )
