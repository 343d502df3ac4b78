"""Benchmark harnesses (ProactiveStream, QA, cost) and the ingestion benchmarks."""
