"""Forms of the dashboard pages."""

from __future__ import annotations

from typing import Any

from django import forms

from aframes_web.streams.importers import formats
from aframes_web.streams.records import SCOPES
from aframes_web.streams.services import ENTITY_KEY_RE, EntityError, check_timezone


class ImportUploadForm(forms.Form):
    format = forms.ChoiceField()
    file = forms.FileField(help_text="The file as the source wrote it (a .gz is fine).")
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
        help_text="IANA zone, e.g. Europe/Berlin; needed for formats without offsets.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = [
            (name, f"{name} — {spec.description}") for name, spec in sorted(formats().items())
        ]

    def clean_entity(self) -> str:
        key = self.cleaned_data["entity"]
        if not ENTITY_KEY_RE.match(key):
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

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        spec = formats().get(data.get("format", ""))
        if spec is not None and spec.needs_tz and not data.get("timezone"):
            self.add_error("timezone", f"{spec.name} files have no time zone: name one.")
        return data
