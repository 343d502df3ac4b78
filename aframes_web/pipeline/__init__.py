"""The pipeline: what stored events set off, in order — ingest, compile, memory close.

ARCHITECTURE.md, "How data flows": ingestion (streams) stores events and hands the (entity, day)
pairs that gained events to :func:`tasks.dispatch_days`; a desktop day's compile (activity) and
the day summaries run as tasks; each of those then closes the memory days (memory) that became
due. Streams, activity and memory import none of this: they declare hooks
(``aframes_web.hooks``) and this app provides them.
"""
