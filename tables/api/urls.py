"""Routes of the hand-history, seating and rake-report APIs, mounted at /api/."""

from django.urls import path

from tables.api import rake, seating, views

urlpatterns = [
    path("hands/", views.HandListView.as_view(), name="api-hands"),
    path("hands/export", views.HandExportView.as_view(), name="api-hands-export"),
    path("hands/<int:pk>/", views.HandDetailView.as_view(), name="api-hand"),
    path("hands/<int:pk>/phh", views.HandPhhView.as_view(), name="api-hand-phh"),
    path("hands/<int:pk>/text", views.HandTextView.as_view(), name="api-hand-text"),
    path("hands/<int:pk>/ohh", views.HandOhhView.as_view(), name="api-hand-ohh"),
    path("hands/<int:pk>/verify", views.HandVerifyView.as_view(), name="api-hand-verify"),
    path("tables/<int:pk>/seat", seating.SitView.as_view(), name="api-table-seat"),
    path("tables/<int:pk>/top-up", seating.TopUpView.as_view(), name="api-table-top-up"),
    path("tables/<int:pk>/leave", seating.LeaveView.as_view(), name="api-table-leave"),
    path("reports/rake/", rake.RakeReportView.as_view(), name="api-rake-report"),
]
