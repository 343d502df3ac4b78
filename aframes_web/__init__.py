"""Aframes: the Django project. Importing it loads the Celery app so tasks bind to it."""

from __future__ import annotations

from aframes_web.celery import app as celery_app

__all__ = ["celery_app"]
