"""The demo's SYNTHETIC data: generators the product ships so ``make run`` shows every page.

No openly licensed real desktop capture or smart-home stream of this shape exists, so the demo
generates realistic ones and says so (README, "Running it"). They are plain Python, with no
Django: the benchmark's synthetic formats (``benchmark.synthetic``) build on them, never the
other way round.
"""
