"""AI assistants: ChatGPT (chatgpt.com and chat.openai.com), Claude, Gemini, AI Studio,
Perplexity, Microsoft Copilot, Mistral Le Chat, DeepSeek, Poe.

A conversation is its id; a new, empty chat has none and stays a plain page of the site.
"""

from __future__ import annotations

from .ref import PageRef
from .url import Parser, Url


def _after(url: Url, marker: str, kind: str) -> PageRef | None:
    seg = url.segments
    if marker in seg:
        index = seg.index(marker)
        if index + 1 < len(seg):
            return PageRef(kind, seg[index + 1])
    return None


def _chatgpt(url: Url) -> PageRef | None:
    found = _after(url, "c", "chatgpt_chat") or _after(url, "share", "chatgpt_share")
    if found:
        return found
    seg = url.segments
    if seg[:1] == ("g",) and len(seg) >= 2:
        return PageRef("chatgpt_gpt", seg[1])
    if len(seg) >= 2 and seg[0] == "project":
        return PageRef("chatgpt_project", seg[1])
    return None


def _claude(url: Url) -> PageRef | None:
    return (
        _after(url, "chat", "claude_chat")
        or _after(url, "project", "claude_project")
        or _after(url, "share", "claude_share")
    )


def _gemini(url: Url) -> PageRef | None:
    return _after(url, "app", "gemini_chat") or _after(url, "gem", "gemini_gem")


def _ai_studio(url: Url) -> PageRef | None:
    found = _after(url, "prompts", "aistudio_prompt")
    if found and found.entity == "new_chat":
        return None
    return found


def _perplexity(url: Url) -> PageRef | None:
    return _after(url, "search", "perplexity_thread") or _after(url, "page", "perplexity_page")


def _copilot(url: Url) -> PageRef | None:
    return _after(url, "chats", "copilot_chat")


def _le_chat(url: Url) -> PageRef | None:
    return _after(url, "chat", "mistral_chat")


def _deepseek(url: Url) -> PageRef | None:
    return _after(url, "s", "deepseek_chat")


def _poe(url: Url) -> PageRef | None:
    return _after(url, "chat", "poe_chat")


HOSTS: dict[str, Parser] = {
    "chatgpt.com": _chatgpt,
    "chat.openai.com": _chatgpt,
    "claude.ai": _claude,
    "gemini.google.com": _gemini,
    "aistudio.google.com": _ai_studio,
    "perplexity.ai": _perplexity,
    "copilot.microsoft.com": _copilot,
    "chat.mistral.ai": _le_chat,
    "chat.deepseek.com": _deepseek,
    "poe.com": _poe,
}
