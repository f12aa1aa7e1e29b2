"""URLs of the API-error tests: the room's own, plus API views that fail unexpectedly."""

from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from cashier.api.views import CashierAPIView
from poker_room.urls import urlpatterns as room_urlpatterns


class BrokenView(APIView):
    """An API view with a bug in it (DRF's exception handler sees the exception)."""

    permission_classes = []

    def get(self, request):
        raise RuntimeError("a bug in an API view")


class BrokenCashierView(CashierAPIView):
    """A cashier view with a bug: its own handler re-raises what it does not know."""

    def get(self, request):
        raise RuntimeError("a bug in a cashier view")
        return Response({})


urlpatterns = [
    path("api/test-broken/", BrokenView.as_view()),
    path("api/test-broken-cashier/", BrokenCashierView.as_view()),
    *room_urlpatterns,
]
