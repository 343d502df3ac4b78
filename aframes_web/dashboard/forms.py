"""Forms of the dashboard pages."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC
from typing import Any

from django import forms
from django.conf import settings

from aframes_web.annotation.models import LabelProject
from aframes_web.streams.importers import formats
from aframes_web.streams.records import SCOPES
from aframes_web.streams.services import ENTITY_KEY_RE, EntityError, check_timezone
from aframes_web.teams.models import FALSE_ALARM_COST_RANGE
from benchmark.methods.registry import DEFAULT_METHODS, METHODS
from memory.engine.decide import DEFAULT_FALSE_ALARM_COST, DEFAULT_THRESHOLD
from memory.models import Decision


class ImportUploadForm(forms.Form):
    """The upload form. What each format needs (a time zone, a key prefix) is said next to
    the format before anything is sent; a file held from an earlier try (``held_name``, see
    held_uploads) stands in for the file input, which browsers never refill."""

    format = forms.ChoiceField()
    file = forms.FileField(
        required=False, help_text="The file as the source wrote it (a .gz is fine)."
    )
    entity = forms.CharField(
        max_length=100,
        help_text="Entity key; for multi-entity formats the prefix of <key>:<id>.",
    )
    scope = forms.ChoiceField(
        required=False, choices=[("", "as the format says")] + [(s, s) for s in SCOPES]
    )
    timezone = forms.CharField(
        required=False,
        max_length=64,
        help_text="IANA zone, e.g. Europe/Berlin.",
    )

    def __init__(self, *args: Any, held_name: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held_name = held_name
        specs = sorted(formats().items())
        self.fields["format"].choices = [
            (name, f"{name} ({spec.scope or 'any scope'})") for name, spec in specs
        ]
        self.format_help = [
            {
                "name": name,
                "description": spec.description,
                "scope": spec.scope or "any scope (each record, or the Scope field)",
                "needs_tz": spec.needs_tz,
                "multi_entity": spec.multi_entity,
            }
            for name, spec in specs
        ]
        zoned = [name for name, spec in specs if spec.needs_tz]
        self.fields["timezone"].help_text = (
            f"IANA zone, e.g. Europe/Berlin. Needed for {', '.join(zoned)}: their files write"
            " local times without an offset."
        )

    def clean_entity(self) -> str:
        key = self.cleaned_data["entity"]
        if not ENTITY_KEY_RE.fullmatch(key):
            raise forms.ValidationError(
                "Use 1-100 letters, digits and . _ : @ -, starting with a letter or digit."
            )
        return key

    def clean_timezone(self) -> str:
        name = self.cleaned_data["timezone"].strip()
        if name:
            try:
                check_timezone(name)
            except EntityError as err:
                raise forms.ValidationError(err.message) from None
        return name

    def clean_file(self) -> Any:
        upload = self.cleaned_data.get("file")
        most = settings.AFRAMES_MAX_UPLOAD_MB
        if upload is not None and upload.size > most << 20:
            raise forms.ValidationError(
                f"The file is {upload.size / (1 << 20):,.0f} MiB; the import page takes at most "
                f"{most:,} MiB (AFRAMES_MAX_UPLOAD_MB). Import it on the server with "
                "manage.py import_events FORMAT PATH --team … --entity …"
            )
        return upload

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("file") and not self.held_name and "file" not in self.errors:
            self.add_error("file", "Choose the file to import.")
        spec = formats().get(data.get("format", ""))
        if spec is not None and spec.needs_tz and not data.get("timezone"):
            self.add_error(
                "timezone",
                f"{spec.name} files write local times without an offset: name the zone they"
                " were written in, e.g. Europe/Berlin.",
            )
        return data


class EntityFilterForm(forms.Form):
    """The team page's entity list: words in the key or name, one scope, a page."""

    q = forms.CharField(required=False, max_length=100, label="Key or name contains")
    scope = forms.ChoiceField(
        required=False, choices=[("", "every scope")] + [(s, s) for s in SCOPES]
    )
    page = forms.IntegerField(required=False, min_value=1)


class FrameFilterForm(forms.Form):
    """The day page's frames table filters; choices come from the day's own frames."""

    app = forms.ChoiceField(required=False)
    site = forms.ChoiceField(required=False)
    monitor = forms.ChoiceField(required=False)
    min_minutes = forms.FloatField(
        required=False,
        min_value=0,
        label="Min minutes",
        widget=forms.NumberInput(attrs={"step": "0.5"}),
    )

    def __init__(self, *args: Any, frames: list[dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("app", "site", "monitor"):
            values = sorted({item[name] for item in frames if item[name]})
            self.fields[name].choices = [("", "all")] + [(v, v) for v in values]


class MonthForm(forms.Form):
    month = forms.RegexField(
        required=False,
        regex=r"^\d{4}-(0[1-9]|1[0-2])$",
        error_messages={"invalid": "Give the month as YYYY-MM, e.g. 2026-03."},
    )

    def clean_month(self) -> str:
        month: str = self.cleaned_data["month"]
        # The calendar links to the month after; year 9999 has none a date can hold.
        if month and not 1 <= int(month[:4]) <= 9998:
            raise forms.ValidationError("Give a month between 0001-01 and 9998-12.")
        return month


class VersionsForm(forms.Form):
    """Two versions of a day to compare: ``a`` (before) and ``b`` (after)."""

    a = forms.TypedChoiceField(coerce=int, label="From version")
    b = forms.TypedChoiceField(coerce=int, label="To version")

    def __init__(self, *args: Any, versions: list[int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [(v, f"v{v}") for v in versions]
        self.fields["a"].choices = choices
        self.fields["b"].choices = choices


class BenchmarkRunForm(forms.Form):
    """Start a ProactiveStream run on the team's streams."""

    scope = forms.ChoiceField(
        choices=[("all", "all scopes")] + [(s, s) for s in SCOPES], initial="all"
    )
    methods = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    control = forms.BooleanField(
        required=False,
        initial=True,
        label="Intervention control",
        help_text="Untick to see what the methods would do without suppressing repeats.",
    )
    curve = forms.BooleanField(
        required=False,
        initial=True,
        label="Threshold curve",
        help_text="Also replay ProactMem at every score threshold, to choose the team's "
        "false-alarm cost by (one more pass over each stream).",
    )

    def __init__(self, *args: Any, llm_configured: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["methods"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = [
            (name, f"{name}: {spec.description}")
            for name, spec in METHODS.items()
            if llm_configured or not spec.needs_llm
        ]
        field.initial = list(DEFAULT_METHODS)


class FalseAlarmCostForm(forms.Form):
    """What a false alarm costs the team, in missed needs (``Team.false_alarm_cost``)."""

    false_alarm_cost = forms.FloatField(
        required=False,
        min_value=FALSE_ALARM_COST_RANGE[0],
        max_value=FALSE_ALARM_COST_RANGE[1],
        label="A false alarm costs",
        help_text="missed needs. ProactMem acts on a moment scored at least c / (1 + c); empty: "
        f"the default, {DEFAULT_FALSE_ALARM_COST:g} (acts from {DEFAULT_THRESHOLD:.2f}).",
        widget=forms.NumberInput(attrs={"step": "any"}),
    )


class OutcomeFilterForm(forms.Form):
    method = forms.CharField(required=False, max_length=32)
    outcome = forms.ChoiceField(
        required=False,
        choices=[
            ("", "any"),
            ("FP", "false positives"),
            ("FN", "false negatives"),
            ("TP", "true positives"),
        ],
    )
    scope = forms.ChoiceField(required=False, choices=[("", "any")] + [(s, s) for s in SCOPES])
    entity = forms.CharField(required=False, max_length=100)
    page = forms.IntegerField(required=False, min_value=1)


class RegularityFilterForm(forms.Form):
    """The memory page's regularity list: one state, words in the sentence, an ordering."""

    state = forms.ChoiceField(required=False)
    q = forms.CharField(required=False, max_length=200, label="Containing", strip=True)
    sort = forms.ChoiceField(
        required=False,
        choices=[
            ("rank", "rank (how much the trigger predicts)"),
            ("confidence", "confidence"),
            ("lift", "lift"),
            ("support", "fulfilled days"),
            ("recent", "last assessed"),
        ],
    )
    page = forms.IntegerField(required=False, min_value=1)

    def __init__(self, *args: Any, states: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["state"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", "live (all but retired)")] + [(s, s) for s in states]
        field.error_messages["invalid_choice"] = (
            f"There is no state “%(value)s”; showing every live regularity. "
            f"The states are {', '.join(states)}."
        )


class DecisionFilterForm(forms.Form):
    """The decisions list: one action and a range of the entity's local days."""

    action = forms.ChoiceField(required=False, choices=[("", "any"), *Decision.Action.choices])
    since = forms.DateField(
        required=False, label="From day", widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        required=False, label="To day", widget=forms.DateInput(attrs={"type": "date"})
    )
    page = forms.IntegerField(required=False, min_value=1)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            self.add_error("until", "The last day comes before the first: swap them.")
        return data


class LabelProjectForm(forms.Form):
    name = forms.CharField(max_length=200)
    scope = forms.ChoiceField(choices=[(s, s) for s in SCOPES])
    entities = forms.CharField(
        required=False,
        max_length=4000,
        help_text="Entity keys separated by spaces or commas; empty: every entity of the scope.",
    )
    starts = forms.DateTimeField(
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Decision points from this moment (UTC); empty: from the first.",
    )
    ends = forms.DateTimeField(
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Up to this moment (UTC, not included); empty: to the last.",
    )
    labels_per_point = forms.IntegerField(
        min_value=1, max_value=10, initial=3, help_text="Independent labels each point needs."
    )
    triage = forms.ChoiceField(initial="none")
    review_percent = forms.IntegerField(
        min_value=0,
        max_value=100,
        initial=10,
        help_text="Share of submitted labels a reviewer goes through (%).",
    )
    guidelines = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="Markdown; empty: the scope's default, which states the labelling rule.",
    )

    def __init__(self, *args: Any, llm_configured: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

        self.fields["triage"].choices = [
            (value, label)
            for value, label in LabelProject.Triage.choices
            if value != "llm" or llm_configured
        ]

    def clean_entities(self) -> list[str]:
        return [k for k in re.split(r"[\s,]+", self.cleaned_data["entities"]) if k]

    def _utc(self, name: str) -> Any:
        value = self.cleaned_data.get(name)
        return value.astimezone(UTC) if value is not None else None

    def clean_starts(self) -> Any:
        return self._utc("starts")

    def clean_ends(self) -> Any:
        return self._utc("ends")


class LabelForm(forms.Form):
    """The annotator's label; the rules (episode, service, order) are the service's."""

    decision = forms.ChoiceField(
        choices=[("intervene", "Intervene"), ("abstain", "Abstain")], widget=forms.RadioSelect
    )
    service = forms.ChoiceField(required=False)
    episode = forms.TypedChoiceField(required=False, coerce=int, empty_value=None)
    new_episode = forms.CharField(required=False, max_length=120, label="New episode")
    reopens = forms.BooleanField(
        required=False, help_text="The episode's opportunity changed or reopened."
    )
    same_as_previous = forms.BooleanField(
        required=False, label="Same episode as the previous point"
    )
    ends_episode = forms.BooleanField(
        required=False,
        label="Episode ended here",
        help_text="The opportunity stopped holding at this point: an intervention after it "
        "no longer counts as timely.",
    )
    rationale = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(
        self, *args: Any, services: list[str], episodes: list[dict[str, Any]], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["service"].choices = [("", "— none (abstain) —")] + [(s, s) for s in services]
        self.fields["episode"].choices = [("", "— none / new below —")] + [
            (e["id"], e["name"]) for e in episodes
        ]


class ReviewForm(forms.Form):
    label = forms.IntegerField(widget=forms.HiddenInput)
    verdict = forms.ChoiceField(choices=[("agree", "Agree"), ("flag", "Flag")])
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class AdjudicateForm(forms.Form):
    decision = forms.ChoiceField(
        choices=[("intervene", "Intervene"), ("abstain", "Abstain")], widget=forms.RadioSelect
    )
    service = forms.ChoiceField(required=False)
    episode = forms.CharField(required=False, max_length=120)
    ends = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        label="Episode ended here",
        help_text="The opportunity served at that point stopped holding at this one.",
    )
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(
        self,
        *args: Any,
        services: list[str],
        served: Sequence[tuple[int, str]] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["service"].choices = [("", "— none (abstain) —")] + [(s, s) for s in services]
        self.fields["ends"].choices = [("", "— no episode ends here —"), *served]


class ReassignForm(forms.Form):
    stream = forms.IntegerField(widget=forms.HiddenInput)
    annotator = forms.CharField(widget=forms.HiddenInput)
    to = forms.ChoiceField()

    def __init__(self, *args: Any, annotators: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["to"].choices = [(u, u) for u in annotators]


class LabelImportForm(forms.Form):
    file = forms.FileField(help_text="Reference labels, one JSON object per line (the export).")


class TaskFilterForm(forms.Form):
    status = forms.ChoiceField(
        required=False,
        choices=[
            ("", "all"),
            ("final", "final"),
            ("waiting", "waiting for adjudication"),
            ("open", "labels still coming"),
        ],
    )
    entity = forms.CharField(required=False, max_length=100)
    page = forms.IntegerField(required=False, min_value=1)


class RoutinesForm(forms.Form):
    """The window and granularity of an entity's routines page (Activity Frames §7.1)."""

    days = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=90,
        label="Last days with activity",
        error_messages={
            "min_value": "Give at least 1 day.",
            "max_value": "Give at most 90 days: each is compiled on request.",
            "invalid": "Give the number of days as a whole number, e.g. 30.",
        },
    )
    granularity = forms.ChoiceField(
        required=False,
        choices=[("action", "actions (clicks, typing)"), ("url", "URL templates")],
    )
