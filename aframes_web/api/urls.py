from __future__ import annotations

from django.urls import path

from aframes_web.api import views

app_name = "api"
urlpatterns = [
    path("entities", views.EntityListView.as_view(), name="entities"),
    path("entities/<str:key>", views.EntityDetailView.as_view(), name="entity"),
    path("entities/<str:key>/events", views.EntityEventsView.as_view(), name="events"),
]
