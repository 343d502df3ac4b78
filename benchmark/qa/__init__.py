"""The question-answering harness of Activity Frames §6.2: an independent oracle over the stored
events, fixed questions with the paper's tolerances, and answerers fed each representation.

``oracle`` (database queries, no compiler code), ``questions`` and ``grading`` (pure),
``representations`` and ``answerers`` (what a model is given and asks), ``run`` (one run over
an entity's days) and ``report`` (qa.json, qa.md, plots). ARCHITECTURE.md: ``benchmark/qa``.
"""
