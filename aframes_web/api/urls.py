from __future__ import annotations

from django.urls import path, re_path

from aframes_web.api import (
    annotation_views,
    benchmark_views,
    errors,
    memory_views,
    routine_views,
    views,
)

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
    path(
        "entities/<str:key>/patterns", routine_views.EntityPatternsView.as_view(), name="patterns"
    ),
    path(
        "entities/<str:key>/routines", routine_views.EntityRoutinesView.as_view(), name="routines"
    ),
    path("entities/<str:key>/decide", memory_views.EntityDecideView.as_view(), name="decide"),
    path(
        "entities/<str:key>/trajectories",
        memory_views.EntityTrajectoriesView.as_view(),
        name="trajectories",
    ),
    path(
        "entities/<str:key>/trajectories/<str:day>",
        memory_views.EntityTrajectoryView.as_view(),
        name="trajectory",
    ),
    path(
        "entities/<str:key>/regularities",
        memory_views.EntityRegularitiesView.as_view(),
        name="regularities",
    ),
    path(
        "entities/<str:key>/regularities/<str:rid>",
        memory_views.EntityRegularityView.as_view(),
        name="regularity",
    ),
    path(
        "entities/<str:key>/decisions",
        memory_views.EntityDecisionsView.as_view(),
        name="decisions",
    ),
    path(
        "entities/<str:key>/decisions/<int:pk>",
        memory_views.EntityDecisionView.as_view(),
        name="decision",
    ),
    path("benchmark/runs", benchmark_views.BenchmarkRunsView.as_view(), name="benchmark_runs"),
    path(
        "benchmark/runs/<int:pk>", benchmark_views.BenchmarkRunView.as_view(), name="benchmark_run"
    ),
    path("labels/projects", annotation_views.LabelProjectsView.as_view(), name="label_projects"),
    path(
        "labels/projects/<int:pk>",
        annotation_views.LabelProjectView.as_view(),
        name="label_project",
    ),
    path(
        "labels/projects/<int:pk>/export",
        annotation_views.LabelExportView.as_view(),
        name="label_export",
    ),
    path(
        "labels/projects/<int:pk>/next", annotation_views.LabelNextView.as_view(), name="label_next"
    ),
    path(
        "labels/projects/<int:pk>/tasks/<int:task>",
        annotation_views.LabelTaskView.as_view(),
        name="label_task",
    ),
    path(
        "labels/assignments",
        annotation_views.LabelAssignmentsView.as_view(),
        name="label_assignments",
    ),
    # Last: any other path under the API is a problem, not the dashboard's HTML 404.
    re_path(r"^[\s\S]*$", errors.not_found, name="not_found"),  # newlines too
]
