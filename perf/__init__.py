"""Load, service and comparison harnesses behind ``make bench-*``: the only package that may
import everything (the product, the pure cores and the ProactiveStream library;
docs/explanation/architecture.md).
"""
