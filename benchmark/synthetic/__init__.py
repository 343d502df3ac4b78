"""SYNTHETIC data generators for tests and benchmarks (no openly licensed real capture exists)."""
