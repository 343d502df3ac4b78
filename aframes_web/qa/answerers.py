"""Answerers (Activity Frames §6.2): an OpenAI-compatible model asked one question at a time
about one representation of a day, through the project's own client (``memory.llm``:
temperature 0, no tools, recorded and cached by prompt hash).

A prompt that does not fit the model's context (cl100k tokens of the prompt plus
:data:`ANSWER_RESERVE_TOKENS`) is never sent: that representation of that day is infeasible for
the model, which the report counts apart from wrong answers. The context is measured in
cl100k tokens, the paper's unit; a model whose own tokenizer needs more may still refuse a
prompt, and that refusal is counted as an error (fail closed), not as infeasible.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from aframes_web.qa.representations import Representation
from aframes_web.streams.models import Entity
from compiler.tokens import cl100k
from memory import llm

ANSWERERS = ("llm",)
DEFAULT_CONTEXT_TOKENS = 8192  # SmolLM2's context; most small local models have at least this
ANSWER_RESERVE_TOKENS = 32  # an answer is one short line
PROMPT = (
    "You are given a record of one day ({day}) of a person's computer activity. Answer the "
    "question using only this record; do not guess, and answer no to a yes/no question the "
    "record does not support. Reply with the answer alone on one line: an application name, "
    "a number, a time as HH:MM, or yes or no.\n\n"
    "RECORD ({representation}):\n{text}\n"
    "QUESTION: {question}{trial}\nANSWER:"
)


class AnswererError(ValueError):
    """The answerer cannot be used as asked (unknown name, no model configured)."""


@dataclass(frozen=True, slots=True)
class Answerer:
    name: str
    model: str
    context_tokens: int
    complete: Callable[[str], str]


def answerer_named(name: str, *, entity: Entity, context_tokens: int) -> Answerer:
    """The answerer called ``name``; ``llm`` is the model that ``LLM_BASE_URL``, ``LLM_MODEL``
    and ``LLM_API_KEY`` configure."""
    if name not in ANSWERERS:
        raise AnswererError(f"unknown answerer {name!r}; choose one of {', '.join(ANSWERERS)}")
    if context_tokens < 256:
        raise AnswererError(f"--context-tokens must be at least 256, got {context_tokens}")
    if not llm.configured():
        raise AnswererError(
            "the llm answerer needs a model: set LLM_BASE_URL (e.g. http://127.0.0.1:8011/v1) "
            "and LLM_MODEL"
        )
    return Answerer(
        name=name,
        model=settings.LLM_MODEL,
        context_tokens=context_tokens,
        complete=lambda prompt: llm.complete(prompt, entity=entity),
    )


def prompt(day: str, representation: Representation, question: str, trial: int = 1) -> str:
    """The prompt of one question. Trials after the first say their number: the client answers
    a prompt asked before from its record, so a repeat must be a prompt of its own to reach
    the model again (at temperature 0 it may still answer the same)."""
    return PROMPT.format(
        day=day,
        representation=representation.name,
        text=representation.text,
        question=question,
        trial=f" (trial {trial})" if trial > 1 else "",
    )


def prompt_tokens(day: str, representation: Representation, question: str) -> int:
    """cl100k tokens of the prompt: the representation's, counted once, plus the rest's."""
    bare = Representation(representation.name, "", 0, representation.source)
    return representation.tokens + cl100k()(prompt(day, bare, question))


def fits(day: str, representation: Representation, question: str, context_tokens: int) -> bool:
    return prompt_tokens(day, representation, question) + ANSWER_RESERVE_TOKENS <= context_tokens
