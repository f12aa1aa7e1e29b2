"""Permissions shared by the APIs: the auditor role (the history, report and ledger APIs),
and the room's overseers, staff or auditors (the room status, the API's schema and docs)."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from accounts.selectors import user_is_auditor


class IsAuditor(BasePermission):
    """Members of the ``auditor`` group only (403 for everyone else signed in)."""

    message = "Only auditors may read this."
    code = "auditors_only"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return user_is_auditor(user=request.user)


class IsStaffOrAuditor(BasePermission):
    """Staff (who run the room) and auditors (who read it) only: 403 for players."""

    message = "Only staff and auditors may read this."
    code = "staff_or_auditors_only"

    def has_permission(self, request: Request, view: APIView) -> bool:
        user = request.user
        return user.is_authenticated and (user.is_staff or user_is_auditor(user=user))
