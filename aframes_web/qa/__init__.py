"""The question-answering harness of Activity Frames §6.2 over a team's stored desktop days.

``oracle`` (database queries, no compiler code), ``representations`` and ``answerers`` (what a
model is given and asks), ``run`` (one run over an entity's days) and ``manage.py
qa_benchmark``. The pure parts (questions, grading, report) are ``benchmark.qa``.
"""
