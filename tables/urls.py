from django.urls import path

from tables import views

urlpatterns = [
    path("", views.home, name="home"),
    path("lobby.json", views.lobby_json, name="lobby-json"),
    path("tables/<int:table_id>/", views.table_page, name="table"),
    path("hands/", views.hands_page, name="hands"),
]
