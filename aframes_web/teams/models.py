"""Teams are the walls of Aframes: every row is reached through one (principle 7)."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

# What a team may say a false alarm costs, in missed needs: from a hundredth (act on almost any
# candidate) to a hundred (act only on what goes beyond all of history). Beyond these bounds the
# threshold (c / (1 + c)) no longer moves by anything a score can tell apart.
FALSE_ALARM_COST_RANGE = (0.01, 100.0)


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    ADJUDICATOR = "adjudicator", "Adjudicator"
    ANNOTATOR = "annotator", "Annotator"
    VIEWER = "viewer", "Viewer"


class Scope(models.TextChoices):
    READ = "read", "Read"
    WRITE = "write", "Write"
    LABEL = "label", "Label"
    ADMIN = "admin", "Admin"


# What a signed-in member may do through the API; tokens carry explicit scopes instead.
ROLE_SCOPES: dict[str, frozenset[str]] = {
    Role.OWNER: frozenset({Scope.READ, Scope.WRITE, Scope.LABEL, Scope.ADMIN}),
    Role.ADJUDICATOR: frozenset({Scope.READ, Scope.LABEL}),
    Role.ANNOTATOR: frozenset({Scope.READ, Scope.LABEL}),
    Role.VIEWER: frozenset({Scope.READ}),
}


class Team(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    # The team's cost of a false alarm against a missed need: ProactMem acts on a candidate
    # scored at or above c / (1 + c) (memory/engine/decide.py, threshold_for). Empty: the
    # engine's default (DEFAULT_FALSE_ALARM_COST there).
    false_alarm_cost = models.FloatField(
        null=True,
        blank=True,
        validators=[
            MinValueValidator(FALSE_ALARM_COST_RANGE[0]),
            MaxValueValidator(FALSE_ALARM_COST_RANGE[1]),
        ],
        help_text="What a needless nudge costs in missed needs (empty: the default, 1).",
    )

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="membership_team_user_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} as {self.role}"


class ApiToken(models.Model):
    """A bearer key for agents and scripts; only its SHA-256 is stored."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    scopes = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="apitoken_team_name_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
