"""What the cashier services raise: one `CashierError` family, each with a stable `code`.

Every error is raised before anything is written, or inside the transaction that is then
rolled back, so a refused movement changes nothing. Views map `code` to an HTTP status.
"""


class CashierError(Exception):
    """Base of every refusal of the cashier; `code` is stable, the message is for people."""

    code = "cashier_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidAmount(CashierError, ValueError):
    """The amount is not a whole number of cents between 1 and `MAX_AMOUNT`."""

    code = "invalid_amount"


class InsufficientFunds(CashierError):
    """The movement would take an account below zero."""

    code = "insufficient_funds"


class IdempotencyKeyReused(CashierError):
    """The idempotency key was already used for a movement with other parameters."""

    code = "idempotency_key_reused"


class UnbalancedTransaction(CashierError, ValueError):
    """Legs handed to the posting service do not sum to zero (a programming error)."""

    code = "unbalanced_transaction"


class DepositLimitExceeded(CashierError):
    """The deposit would take the player past the daily deposit limit."""

    code = "deposit_limit_exceeded"


class DepositDeclined(CashierError):
    """The payment gateway refused the charge."""

    code = "deposit_declined"


class WithdrawalNotPending(CashierError):
    """The withdrawal was already paid, rejected or cancelled."""

    code = "withdrawal_not_pending"


class WithdrawalNotFound(CashierError):
    """No such withdrawal belongs to this player."""

    code = "withdrawal_not_found"


class IdempotencyKeyInvalid(CashierError):
    """A client's idempotency key is not printable ASCII of a sane length."""

    code = "idempotency_key_invalid"


class IdempotencyKeyMissing(IdempotencyKeyInvalid):
    """A request that needs a client's idempotency key came without one (or an empty one)."""

    code = "idempotency_key_missing"
