"""Routes of the cashier API, mounted at /api/."""

from django.urls import path

from cashier.api import views

urlpatterns = [
    path("wallet/", views.WalletView.as_view(), name="api-wallet"),
    path("ledger/", views.LedgerView.as_view(), name="api-ledger"),
    path("cashier/deposits/", views.DepositView.as_view(), name="api-deposits"),
    path("cashier/withdrawals/", views.WithdrawalListView.as_view(), name="api-withdrawals"),
    path(
        "cashier/withdrawals/<int:pk>/cancel/",
        views.WithdrawalCancelView.as_view(),
        name="api-withdrawal-cancel",
    ),
]
