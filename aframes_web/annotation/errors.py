"""The workbench's refusals, raised by its services and read by its doors."""

from __future__ import annotations


class WorkbenchError(ValueError):
    """A refused write; the message says why and what to do instead."""
