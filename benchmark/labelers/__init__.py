"""ProactiveStream's documented reference labelers, one per scope (ProactMem §4.2).

A labeler decides, at each decision point, from the point, the stream's history up to it and
the private ground truth up to that time, whether the point is the **first reliable actionable
window** of a new opportunity (intervene) or not (abstain). Its opportunities are defined by
what happened; it shares no code with the methods it scores (only the stream records and the
service catalogue of ``benchmark/streams``), and it never reads a later event: it is fed the
stream one step at a time, as a method is. ``base.py`` holds the episode rule every scope
follows; each scope module states its catalogue of opportunity types.
"""
