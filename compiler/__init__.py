"""The activity-frames compiler: pure Python, deterministic, no Django (the compiler issue)."""
