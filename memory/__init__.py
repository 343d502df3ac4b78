"""ProactMem as a Django app: recent events, daily trajectories, regularities.

ProactMem (arXiv 2610.36967; ARCHITECTURE.md, "How data flows" 3-4); the pure engine lives in
memory/engine/.
"""
