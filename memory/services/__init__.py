"""Writes of ProactMem, one module per family: deciding, closing days (with rebuilds), and the
per-process caches both read through."""
