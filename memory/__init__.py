"""ProactMem as a Django app: recent events, daily trajectories, regularities.

Built by the ProactMem issue; the pure engine lives in memory/engine/.
"""
