"""The optional LLM: an OpenAI-compatible chat-completions client, recorded, cached, fail-closed.

Configured by ``LLM_BASE_URL`` (e.g. ``http://127.0.0.1:8080/v1``), ``LLM_MODEL`` and
``LLM_API_KEY``; nothing needs it. Every call is made at temperature 0 and recorded
(:class:`memory.models.LlmCall`: prompt hash, tokens, latency, reply or error); a prompt asked
before is answered from the record, so a replay is reproducible and free. Any failure raises
:class:`LlmUnavailable`, which the LLM policies turn into an abstention (they fail closed).
"""

from __future__ import annotations

import hashlib
import json
import time
import urllib.error
import urllib.request
from typing import Any

from django.conf import settings

from memory.models import LlmCall

TIMEOUT_S = 60.0  # a small local model answers a decision prompt well within this


class LlmUnavailable(RuntimeError):
    """No model is configured, or the call failed; the message says which and why."""


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
    began = time.perf_counter()
    try:
        body = _post(model, prompt)
        reply = body["choices"][0]["message"]["content"]
        if not isinstance(reply, str):
            raise LlmUnavailable(f"the reply's content is {type(reply).__name__}, not text")
    except (LlmUnavailable, KeyError, IndexError, TypeError) as err:
        _record(entity, model, digest, prompt, began, error=f"{type(err).__name__}: {err}")
        raise LlmUnavailable(f"the LLM call failed: {err}") from None
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
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:  # noqa: S310
            data = json.loads(answer.read())
    except urllib.error.HTTPError as err:
        raise LlmUnavailable(f"{url} answered HTTP {err.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        raise LlmUnavailable(f"{url} could not be reached: {err}") from None
    except ValueError:
        raise LlmUnavailable(f"{url} did not answer JSON") from None
    if not isinstance(data, dict):
        raise LlmUnavailable(f"{url} answered {type(data).__name__}, not a JSON object")
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
