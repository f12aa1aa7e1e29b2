"""Payment gateways: the interface deposits go through, and the sandbox that credits at once.

`CASHIER_PAYMENT_GATEWAY` (a dotted path) names the class; `payment_gateway_get()` builds
it. A gateway is called while the player's wallet row is locked, so that the daily limit
and the credit are decided together. The sandbox answers at once; a real gateway that
needs a network round-trip should be made two-step instead (record a pending deposit,
credit it when the gateway's webhook confirms), which this interface leaves room for.
"""

import uuid
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from accounts.models import User


@dataclass(frozen=True)
class Charge:
    """The gateway's answer to a charge: approved or not, and its own reference."""

    approved: bool
    reference: str
    reason: str = ""


class PaymentGateway(Protocol):
    name: str

    def charge(self, *, user: User, amount: int, idempotency_key: str) -> Charge:
        """Take `amount` cents from the player's payment method.

        Gateways must honour `idempotency_key`: charging twice with one key charges once.
        """
        ...


class SandboxGateway:
    """Approves every charge at once with a made-up reference. For the demo and tests."""

    name = "sandbox"

    def charge(self, *, user: User, amount: int, idempotency_key: str) -> Charge:
        return Charge(approved=True, reference=f"sandbox-{uuid.uuid4().hex[:16]}")


def payment_gateway_get() -> PaymentGateway:
    return import_string(settings.CASHIER_PAYMENT_GATEWAY)()
