"""The member-side sync agent: capture database rows to an Aframes server, privacy first.

Needs only the standard library and the pure ``compiler`` package, so it runs on a member's
machine without Django. ``python -m aframes_sync`` or the ``aframes-sync`` console script.
"""

from __future__ import annotations
