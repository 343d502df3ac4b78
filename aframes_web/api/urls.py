from __future__ import annotations

from django.urls import path

from aframes_web.api import views

app_name = "api"
urlpatterns = [
    path("entities", views.EntityListView.as_view(), name="entities"),
    path("entities/<str:key>", views.EntityDetailView.as_view(), name="entity"),
    path("entities/<str:key>/events", views.EntityEventsView.as_view(), name="events"),
    path("entities/<str:key>/days", views.EntityDaysView.as_view(), name="days"),
    path("entities/<str:key>/days/<str:day>", views.EntityDayView.as_view(), name="day"),
    path("entities/<str:key>/frames", views.EntityFramesView.as_view(), name="frames"),
    path("entities/<str:key>/context", views.EntityContextView.as_view(), name="context"),
    path("entities/<str:key>/evidence", views.EntityEvidenceView.as_view(), name="evidence"),
]
