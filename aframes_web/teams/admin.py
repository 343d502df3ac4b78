from __future__ import annotations

from django.contrib import admin

from aframes_web.teams.models import ApiToken, Membership, Team


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["team", "user", "role"]
    list_filter = ["role"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "prefix", "scopes", "last_used_at", "revoked_at"]
    readonly_fields = ["prefix", "key_hash", "last_used_at"]
