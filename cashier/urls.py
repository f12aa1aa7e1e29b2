"""The cashier page and its forms."""

from django.urls import path

from cashier import views

urlpatterns = [
    path("", views.cashier_page, name="cashier"),
    path("deposit/", views.deposit, name="cashier-deposit"),
    path("withdraw/", views.withdraw, name="cashier-withdraw"),
    path(
        "withdrawals/<int:pk>/cancel/",
        views.withdrawal_cancel_view,
        name="cashier-withdrawal-cancel",
    ),
]
