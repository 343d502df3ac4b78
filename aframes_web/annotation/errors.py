"""The workbench's refusals, raised by its services and read by its doors."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied


class WorkbenchError(ValueError):
    """A refused write; the message says why and what to do instead."""


class LabellingBlind(PermissionDenied):
    """A page a person labelling blind may not see yet; the message says why. The 403 page
    sends them back to the workbench instead of suggesting another role."""
