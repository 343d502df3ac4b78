"""A labeler's validity study, drawn as a blind labelling project (``labeling sample``)."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from aframes_web.annotation import selectors as sel
from aframes_web.annotation.models import Task
from aframes_web.proactivestream.selectors import stream_of
from benchmark.labelers.registry import reference_labels
from tests.test_proactivestream_run import home  # noqa: F401  (a fixture: Ordóñez A, 9 days)

pytestmark = pytest.mark.django_db


def _sample(*args: str) -> str:
    out = StringIO()
    call_command("labeling", "sample", "--team", "acme", *args, stdout=out)
    return out.getvalue()


def test_a_study_holds_every_flagged_point_and_as_many_random_abstains_blind(
    home: Any,  # noqa: F811  (the fixture imported above)
    people: dict[str, Any],
) -> None:
    said = _sample("--name", "Study v1", "--scope", "home", "--labeler-version", "1", "--seed", "7")
    project = sel.project_get(team=home.team, pk=Task.objects.values("project").first()["project"])
    assert project is not None and project.labels_per_point == 3
    labels = reference_labels(stream_of(home), version=1)
    flagged = {k for k, v in labels.items() if v.positive}
    sampled = set(Task.objects.filter(project=project).values_list("point__key", flat=True))
    assert flagged and flagged <= sampled and len(sampled) == 2 * len(flagged)
    assert f"({len(flagged)} the labeler flags, {len(flagged)} of its abstains" in said
    # Every point goes to three annotators; nothing on a task says what the labeler said.
    for annotator in (people["ana"], people["ben"], people["cy"]):
        assert sel.current_task(project, annotator) is not None
    assert "labeler" not in project.guidelines.lower()
    # The same seed draws the same study.
    _sample("--name", "Again", "--scope", "home", "--labeler-version", "1", "--seed", "7")
    again = home.team.label_projects.get(name="Again")
    assert set(Task.objects.filter(project=again).values_list("point__key", flat=True)) == sampled
    assert f"--out benchmark/studies/home/{project.pk}.jsonl" in said
    # Version 2 flags nothing in these nine days: a study of its flags is empty, and the
    # command says how to look for what it misses instead.
    with pytest.raises(CommandError, match="flags no point on these streams.*--abstains N"):
        _sample("--name", "Empty", "--scope", "home")
    drawn = _sample("--name", "Misses", "--scope", "home", "--abstains", "12")
    assert "(0 the labeler flags, 12 of its abstains" in drawn
    with pytest.raises(CommandError, match="--abstains must be 0 or more"):
        _sample("--name", "Neg", "--scope", "home", "--abstains", "-1")
    with pytest.raises(CommandError, match="home has labeler versions 1, 2"):
        _sample("--name", "Bad", "--scope", "home", "--labeler-version", "0")
    with pytest.raises(CommandError, match="no sports entities"):
        _sample("--name", "None", "--scope", "sports")
