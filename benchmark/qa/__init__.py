"""The pure parts of the question-answering harness of Activity Frames §6.2: fixed questions with
the paper's tolerances (``questions``), their grading (``grading``) and the report (``report``).

The parts that read a team's stored days (the oracle, the representations, the answerers and a
run) are the ``aframes_web.qa`` app; ``make bench-qa`` is ``perf.qa``.
"""
