from __future__ import annotations

from django.urls import path

from aframes_web.dashboard import views

app_name = "dashboard"
urlpatterns = [
    path("", views.home, name="home"),
    path("t/<slug:slug>/", views.team, name="team"),
    path("t/<slug:slug>/import/", views.import_upload, name="import"),
    path("t/<slug:slug>/import/<int:job_id>/", views.import_job, name="import_job"),
]
