"""Every chip movement of the room, one function each (HackSoft `<entity>_<action>`).

Public API (keyword-only; amounts are integer cents; all raise `cashier.exceptions`):

- `deposit_create`, `withdrawal_request`, `withdrawal_approve`, `withdrawal_reject`,
  `withdrawal_cancel`: the cashier.
- `table_buy_in`, `table_top_up`, `table_cash_out`, `hand_rake_collect`: for the tables
  layer, which checks the table rules (buy-in range, ratholing) before calling them and
  passes its table's ledger account (`table_account_ensure`, by the opaque reference the
  tables layer chose: this module knows nothing of tables);
  `table_movement_replay` lets it recognise a retried buy-in or top-up first.
- `ledger_post`: the one writer of the ledger, which all of the above go through.
- `wallet_ensure`, `table_account_ensure`, `system_account_ensure`, `ledger_accounts_lock`.

Transactions
    Nothing is half-done, ever. A movement is one statement (`ledger_post`), atomic by
    itself; a service that does more (a withdrawal's row, a deposit's charge) runs in one
    `transaction.atomic()` block. Neither is `durable`, so the tables layer calls these
    inside its own transaction (the one holding the table row lock). A refusal is found
    before anything is written (see below), so it leaves the caller's transaction as it
    was, with no savepoint to pay for, and the caller decides what to do. A statement
    that fails (the database refusing it, a lock not granted in time) fails the
    caller's transaction, as any failed statement does.

Locking policy
    A movement locks every ledger account it touches with `SELECT ... FOR UPDATE`, in
    ascending account id, in the statement that writes it: it checks funds against the
    balances the locks return (a refusal writes nothing), claims its idempotency key
    (the insert of its transaction row), and writes the legs and balances.
    Locks are held to the end of the outermost transaction. Withdrawal
    services first lock the `Withdrawal` row, then the accounts. Room-wide, the order is:
    table row -> seats (by seat number) -> withdrawal row -> ledger accounts (by id).
    These services never lock a table or seat row.

    A caller that posts several movements in one transaction (say, rake and then a
    cash-out at the end of a hand) should first call `ledger_accounts_lock` with every
    account it will touch, so that its locks too are taken in id order; otherwise
    PostgreSQL's deadlock detector may abort one of two transactions that meet.

    The house, hold and clearing accounts are single rows every rake, withdrawal or
    deposit locks: those movements are serialized room-wide, for the few milliseconds
    of the posting. That is the price of a cached balance checked under a lock.

Idempotency
    Every movement takes an idempotency key, unique across the ledger; callers namespace
    theirs: client keys go through `cashier.idempotency.client_idempotency_key`
    (``api:<user id>:<command>:<header>``, ``ws:...``, ``web:...``), the room's own keys
    never start with a client channel (``hand:<id>:rake``, ``leave:seat:<id>``). The key
    is claimed by the insert of the movement's transaction, after the account locks are
    held, so two concurrent retries are serialized and the second finds the first's
    (a twin on other accounts waits at the insert for the first to commit). Same key and
    same parameters: the original result is returned and nothing moves, whatever the
    balances are now. Same key and other parameters: `IdempotencyKeyReused`. Withdrawal
    decisions need no key: a withdrawal is decided once (its id is the key), and
    repeating a decision is a no-op.
"""

import functools
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import CharField, Field, Sum
from django.utils import timezone

from accounts.models import User
from cashier.exceptions import (
    DepositDeclined,
    DepositLimitExceeded,
    IdempotencyKeyReused,
    InsufficientFunds,
    InvalidAmount,
    UnbalancedTransaction,
    WithdrawalNotFound,
    WithdrawalNotPending,
)
from cashier.gateways import payment_gateway_get
from cashier.models import (
    AccountKind,
    LedgerAccount,
    LedgerEntry,
    LedgerTransaction,
    TransactionKind,
    Withdrawal,
    WithdrawalStatus,
)
from poker_room.postgres import prepared

# Larger than any sane movement, far below 2**63: sums of legs can never overflow.
MAX_AMOUNT = 10**12


@dataclass(frozen=True)
class Leg:
    """One side of a movement: `amount` cents added to (or, negative, taken from) `account`."""

    account: LedgerAccount
    amount: int


@dataclass(frozen=True)
class Posting:
    """What `ledger_post` did: the transaction, and whether it is new or a replay."""

    transaction: LedgerTransaction
    created: bool


class AccountsNotFound(RuntimeError):
    """A movement named an account that is not in the ledger (not with that kind): a
    caller's bug, or an account id remembered from a database rolled back since."""


def amount_check(*, amount: object) -> int:
    """Return `amount` if it is a whole number of cents from 1 to `MAX_AMOUNT`."""
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise InvalidAmount("The amount must be a whole number of cents.")
    if amount <= 0:
        raise InvalidAmount("The amount must be at least 1 cent.")
    if amount > MAX_AMOUNT:
        raise InvalidAmount(f"The amount must be at most {MAX_AMOUNT} cents.")
    return amount


def wallet_ensure(*, user: User) -> LedgerAccount:
    account, _ = LedgerAccount.objects.get_or_create(kind=AccountKind.WALLET, user=user)
    return account


def table_account_ensure(*, reference: str, name: str) -> LedgerAccount:
    """The table account known by `reference`, created on first use and shown as `name`.

    `reference` is the owner's opaque key (unique among table accounts, never empty).
    """
    if not reference:
        raise ValueError("a table account needs a reference")
    account, _ = LedgerAccount.objects.get_or_create(
        kind=AccountKind.TABLE, reference=reference, defaults={"name": name}
    )
    return account


def system_account_ensure(*, kind: AccountKind) -> LedgerAccount:
    """The house, hold or clearing account, created on first use."""
    account, _ = LedgerAccount.objects.get_or_create(kind=kind)
    return account


def ledger_accounts_lock(*, accounts: Iterable[LedgerAccount]) -> dict[int, LedgerAccount]:
    """Lock the accounts in ascending id, in one statement; return them fresh, by id.

    Must run inside a transaction; the locks last until its outermost block ends.
    """
    ids = sorted({account.pk for account in accounts})
    rows = LedgerAccount.objects.select_for_update().filter(pk__in=ids).order_by("pk")
    return {account.pk: account for account in rows}


def ledger_post(
    *,
    kind: TransactionKind,
    legs: Sequence[Leg],
    idempotency_key: str,
    memo: str = "",
    user: User | None = None,
    hand_id: int | None = None,
) -> Posting:
    """Post a balanced movement once per idempotency key (see the module docstring)."""
    _legs_check(legs=legs)
    fingerprint = _fingerprint(kind=kind, legs=legs, user=user, hand_id=hand_id)
    # One statement (`_transaction_write`): atomic by itself, and a refusal writes nothing,
    # so it needs no transaction or savepoint of its own.
    posted = _transaction_write(
        kind=kind,
        legs=legs,
        idempotency_key=idempotency_key,
        fingerprint=fingerprint,
        memo=memo,
        user=user,
        hand_id=hand_id,
    )
    if posted is None:
        original = _transaction_taken(idempotency_key=idempotency_key, fingerprint=fingerprint)
        return Posting(transaction=original, created=False)
    return Posting(transaction=posted, created=True)


def deposit_create(*, user: User, amount: int, idempotency_key: str) -> LedgerTransaction:
    """Charge the payment gateway and credit the player's wallet (clearing -> wallet).

    The daily limit (`CASHIER_DEPOSIT_DAILY_LIMIT` cents) counts deposits over the last
    24 hours, rolling; it is checked with the wallet locked, so concurrent deposits cannot
    pass it together.
    """
    amount = amount_check(amount=amount)
    with transaction.atomic():
        wallet = wallet_ensure(user=user)
        clearing = system_account_ensure(kind=AccountKind.CLEARING)
        legs = [Leg(account=clearing, amount=-amount), Leg(account=wallet, amount=amount)]
        kind = TransactionKind.DEPOSIT
        fingerprint = _fingerprint(kind=kind, legs=legs, user=user, hand_id=None)
        ledger_accounts_lock(accounts=[clearing, wallet])
        original = _transaction_replay(idempotency_key=idempotency_key, fingerprint=fingerprint)
        if original is not None:
            return original
        _deposit_limit_check(wallet=wallet, amount=amount)
        gateway = payment_gateway_get()
        charge = gateway.charge(user=user, amount=amount, idempotency_key=idempotency_key)
        if not charge.approved:
            raise DepositDeclined(charge.reason or "The payment was declined.")
        posted = _transaction_write(
            kind=kind,
            legs=legs,
            idempotency_key=idempotency_key,
            fingerprint=fingerprint,
            memo=f"deposit via {gateway.name}",
            user=user,
            external_reference=charge.reference,
        )
        if posted is None:
            # Unreachable while keys name their user and command (a twin locks this wallet
            # too and is found by the look-up above). Were it reached, the gateway has
            # charged: a twin's own deposit is returned; a key that posted anything else
            # raises IdempotencyKeyReused with the charge made, to be refunded by hand.
            return _transaction_taken(idempotency_key=idempotency_key, fingerprint=fingerprint)
        return posted


def withdrawal_request(*, user: User, amount: int, idempotency_key: str) -> Withdrawal:
    """Hold `amount` from the wallet until staff approve or reject, or the player cancels."""
    amount = amount_check(amount=amount)
    with transaction.atomic():
        wallet = wallet_ensure(user=user)
        hold = system_account_ensure(kind=AccountKind.HOLD)
        posting = ledger_post(
            kind=TransactionKind.WITHDRAWAL_REQUEST,
            legs=[Leg(account=wallet, amount=-amount), Leg(account=hold, amount=amount)],
            idempotency_key=idempotency_key,
            memo="withdrawal requested",
            user=user,
        )
        if not posting.created:
            return posting.transaction.withdrawal_requested
        return Withdrawal.objects.create(
            user=user, amount=amount, request_transaction=posting.transaction
        )


def withdrawal_approve(*, withdrawal: Withdrawal, decided_by: User) -> Withdrawal:
    """Pay the held amount out (hold -> clearing). Approving twice is a no-op."""
    return _withdrawal_settle(
        withdrawal=withdrawal, status=WithdrawalStatus.PAID, decided_by=decided_by
    )


def withdrawal_reject(*, withdrawal: Withdrawal, decided_by: User) -> Withdrawal:
    """Release the held amount to the wallet (hold -> wallet). Rejecting twice is a no-op."""
    return _withdrawal_settle(
        withdrawal=withdrawal, status=WithdrawalStatus.REJECTED, decided_by=decided_by
    )


def withdrawal_cancel(*, withdrawal: Withdrawal, user: User) -> Withdrawal:
    """The player takes back their pending withdrawal (hold -> wallet)."""
    if withdrawal.user_id != user.pk:
        raise WithdrawalNotFound("You have no such withdrawal.")
    return _withdrawal_settle(
        withdrawal=withdrawal, status=WithdrawalStatus.CANCELLED, decided_by=user
    )


def table_buy_in(
    *, user: User, account: LedgerAccount, amount: int, idempotency_key: str
) -> Posting:
    """Move a buy-in from the wallet to the table `account` (limits are the tables layer's).

    Returns the `Posting`: `created` is False when the key had already moved these chips
    (a replay, which moved nothing now); the caller must then not seat anyone again.
    """
    return _wallet_to_table(
        kind=TransactionKind.BUY_IN,
        user=user,
        account=account,
        amount=amount,
        idempotency_key=idempotency_key,
    )


def table_top_up(
    *, user: User, account: LedgerAccount, amount: int, idempotency_key: str
) -> Posting:
    """Move a top-up from the wallet to the table, exactly like a buy-in (`Posting` too)."""
    return _wallet_to_table(
        kind=TransactionKind.TOP_UP,
        user=user,
        account=account,
        amount=amount,
        idempotency_key=idempotency_key,
    )


def table_movement_replay(
    *,
    kind: TransactionKind,
    user: User,
    account: LedgerAccount | None,
    amount: object,
    idempotency_key: str,
) -> LedgerTransaction | None:
    """The buy-in or top-up this key already posted, or None if the key is unused.

    For the tables layer, which must answer a retried seat or top-up request as the
    first time (or refuse it) before it checks seats and limits, and never move chips
    again. Raises `IdempotencyKeyReused` when the key posted a different movement (other
    kind, amount, player or table). `account` is the table's account, None while the
    table has none (then no key can have moved chips to it). Moves nothing, locks nothing.
    """
    original = LedgerTransaction.objects.filter(idempotency_key=idempotency_key).first()
    if original is None:
        return None
    try:
        amount = amount_check(amount=amount)
    except InvalidAmount:
        amount = 0  # no posted movement has this amount: the fingerprint will differ
    wallet = LedgerAccount.objects.filter(kind=AccountKind.WALLET, user=user).first()
    if amount and wallet is not None and account is not None:
        _table_account_check(account=account)
        legs = [Leg(account=wallet, amount=-amount), Leg(account=account, amount=amount)]
        fingerprint = _fingerprint(kind=kind, legs=legs, user=user, hand_id=None)
    else:
        fingerprint = ""
    return _transaction_replay(idempotency_key=idempotency_key, fingerprint=fingerprint)


def table_cash_out(
    *, user: User, account: LedgerAccount, amount: int, idempotency_key: str
) -> LedgerTransaction:
    """Return chips from the table `account` to the player's wallet."""
    amount = amount_check(amount=amount)
    _table_account_check(account=account)
    wallet = wallet_ensure(user=user)
    return ledger_post(
        kind=TransactionKind.CASH_OUT,
        legs=[Leg(account=account, amount=-amount), Leg(account=wallet, amount=amount)],
        idempotency_key=idempotency_key,
        memo=f"cash-out from {account.name}",
        user=user,
    ).transaction


def hand_rake_collect(
    *, account: LedgerAccount, amount: int, hand_id: int
) -> LedgerTransaction | None:
    """Move a hand's rake from the table `account` to the house, once per hand.

    A hand that pays no rake (`amount` 0) posts nothing and returns None.
    """
    if type(amount) is int and amount == 0:
        return None
    amount = amount_check(amount=amount)
    _table_account_check(account=account)
    database = connection.settings_dict["NAME"]
    house = _houses.get(database)
    if house is not None:
        try:
            return _rake_post(account=account, house=house, amount=amount, hand_id=hand_id)
        except AccountsNotFound:  # nothing was written
            _houses.pop(database, None)  # (another thread may have found it first)
    house = _houses[database] = system_account_ensure(kind=AccountKind.HOUSE)
    return _rake_post(account=account, house=house, amount=amount, hand_id=hand_id)


# The house account by database, remembered once looked up: there is one (a database
# constraint) and it is never deleted (its legs protect it), so a raked hand does not
# look it up. The posting locks it by id and kind; should the id be gone (a test's
# database rolled back since), nothing is written and the hand looks the house up again.
_houses: dict[str, LedgerAccount] = {}


def _rake_post(
    *, account: LedgerAccount, house: LedgerAccount, amount: int, hand_id: int
) -> LedgerTransaction:
    return ledger_post(
        kind=TransactionKind.RAKE,
        legs=[Leg(account=account, amount=-amount), Leg(account=house, amount=amount)],
        idempotency_key=f"hand:{hand_id}:rake",
        memo=f"rake of hand {hand_id}",
        hand_id=hand_id,
    ).transaction


def _table_account_check(*, account: LedgerAccount) -> None:
    """A table movement's account must be a table account (a caller's bug otherwise)."""
    if account.kind != AccountKind.TABLE:
        raise ValueError(f"{account} is not a table account")


def _wallet_to_table(
    *,
    kind: TransactionKind,
    user: User,
    account: LedgerAccount,
    amount: int,
    idempotency_key: str,
) -> Posting:
    amount = amount_check(amount=amount)
    _table_account_check(account=account)
    wallet = wallet_ensure(user=user)
    return ledger_post(
        kind=kind,
        legs=[Leg(account=wallet, amount=-amount), Leg(account=account, amount=amount)],
        idempotency_key=idempotency_key,
        memo=f"{TransactionKind(kind).label.lower()} at {account.name}",
        user=user,
    )


def _withdrawal_settle(
    *, withdrawal: Withdrawal, status: WithdrawalStatus, decided_by: User
) -> Withdrawal:
    with transaction.atomic():
        locked = Withdrawal.objects.select_for_update().get(pk=withdrawal.pk)
        if locked.status == status:
            return locked
        if locked.status != WithdrawalStatus.PENDING:
            raise WithdrawalNotPending(
                f"Withdrawal #{locked.pk} is already {locked.get_status_display().lower()}."
            )
        hold = system_account_ensure(kind=AccountKind.HOLD)
        if status == WithdrawalStatus.PAID:
            kind, target = (
                TransactionKind.WITHDRAWAL_PAID,
                system_account_ensure(kind=AccountKind.CLEARING),
            )
        else:
            kind, target = TransactionKind.WITHDRAWAL_RELEASE, wallet_ensure(user=locked.user)
        posting = ledger_post(
            kind=kind,
            legs=[
                Leg(account=hold, amount=-locked.amount),
                Leg(account=target, amount=locked.amount),
            ],
            idempotency_key=f"withdrawal:{locked.pk}:settle",
            memo=f"withdrawal #{locked.pk} {WithdrawalStatus(status).label.lower()}",
            user=locked.user,
        )
        locked.status = status
        locked.decided_at = timezone.now()
        locked.decided_by = decided_by
        locked.settle_transaction = posting.transaction
        locked.save(update_fields=["status", "decided_at", "decided_by", "settle_transaction"])
        return locked


def _deposit_limit_check(*, wallet: LedgerAccount, amount: int) -> None:
    limit = settings.CASHIER_DEPOSIT_DAILY_LIMIT
    since = timezone.now() - timedelta(hours=24)
    deposited = (
        LedgerEntry.objects.filter(
            account=wallet,
            transaction__kind=TransactionKind.DEPOSIT,
            transaction__created_at__gte=since,
        ).aggregate(total=Sum("amount"))["total"]
        or 0
    )
    if deposited + amount > limit:
        raise DepositLimitExceeded(
            f"Deposits are limited to {limit} cents per 24 hours; "
            f"you can deposit {max(limit - deposited, 0)} cents more now."
        )


def _legs_check(*, legs: Sequence[Leg]) -> None:
    if len(legs) < 2:
        raise UnbalancedTransaction("A movement needs at least two legs.")
    if len({leg.account.pk for leg in legs}) != len(legs):
        raise UnbalancedTransaction("Each account may appear in one leg only.")
    for leg in legs:
        if isinstance(leg.amount, bool) or not isinstance(leg.amount, int) or leg.amount == 0:
            raise UnbalancedTransaction(
                f"Leg amounts must be non-zero integers, not {leg.amount!r}."
            )
    if sum(leg.amount for leg in legs) != 0:
        raise UnbalancedTransaction("The legs of a movement must sum to zero.")


def _fingerprint(
    *,
    kind: TransactionKind,
    legs: Sequence[Leg],
    user: User | None,
    hand_id: int | None,
) -> str:
    """A digest of everything that defines a movement, to recognise a true retry.

    The table of a table movement is in its legs (the table account's id).
    """
    payload = {
        "kind": str(kind),
        "legs": sorted([leg.account.pk, leg.amount] for leg in legs),
        "user": user.pk if user else None,
        "hand": hand_id,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _transaction_replay(*, idempotency_key: str, fingerprint: str) -> LedgerTransaction | None:
    original = LedgerTransaction.objects.filter(idempotency_key=idempotency_key).first()
    if original is not None and original.fingerprint != fingerprint:
        raise IdempotencyKeyReused(
            "This idempotency key was already used for a different request; "
            "use a new key for a new request."
        )
    return original


def _transaction_taken(*, idempotency_key: str, fingerprint: str) -> LedgerTransaction:
    """The transaction that holds the key `_transaction_write` found taken: a replay's
    answer (`IdempotencyKeyReused` if it posted something else)."""
    original = _transaction_replay(idempotency_key=idempotency_key, fingerprint=fingerprint)
    if original is None:  # the ledger is append-only: a key once taken stays taken
        raise RuntimeError(f"the idempotency key {idempotency_key!r} is taken by no transaction")
    return original


def _transaction_write(
    *,
    kind: TransactionKind,
    legs: Sequence[Leg],
    idempotency_key: str,
    fingerprint: str,
    memo: str,
    user: User | None = None,
    hand_id: int | None = None,
    external_reference: str = "",
) -> LedgerTransaction | None:
    """Write a movement, checked, in one statement; None (nothing written) when its key
    is taken already.

    The statement (`_posting_sql`) locks the legs' accounts in ascending id, checks the
    funds against their balances, claims the key by the insert of the transaction row
    (`ON CONFLICT DO NOTHING`), and writes the legs and the new balances: one round trip,
    and nothing to undo after a refusal, so no savepoint. A key taken is a replay,
    answered as the first time whatever the balances are now. A twin request with the key
    still uncommitted on other accounts (no lock shared) makes the insert wait for it:
    once it commits, the key is taken; if it rolls back, ours is written (should ours
    fall short of funds, it is refused without waiting: a key reused on other accounts is
    refused either way). A refusal (`InsufficientFunds`) has written nothing: the
    caller's transaction goes on as it was, the accounts' locks held to its end.
    """
    posted = LedgerTransaction(
        kind=kind,
        memo=memo,
        idempotency_key=idempotency_key,
        fingerprint=fingerprint,
        user=user,
        hand_id=hand_id,
        external_reference=external_reference,
    )
    with connection.cursor() as cursor:
        prepared.execute(cursor, [(_posting_sql(), _posting_parameters(posted, legs))])
        posted_id, locked, short = cursor.fetchone()
    if posted_id is not None:
        posted.pk = posted_id
        posted._state.adding = False
        posted._state.db = connection.alias
        return posted
    if locked != len(legs):
        raise AccountsNotFound(f"{len(legs)} accounts to post to, {locked} found")
    if short and not LedgerTransaction.objects.filter(idempotency_key=idempotency_key).exists():
        account_id, balance, amount = short[0]
        account = next(leg.account for leg in legs if leg.account.pk == account_id)
        raise InsufficientFunds(
            f"Not enough chips: the {account} holds {balance} cents and {-amount} are needed."
        )
    return None


def _posting_parameters(posted: LedgerTransaction, legs: Sequence[Leg]) -> list[object]:
    """The parameters of `_posting_sql` for the transaction row `posted` and its legs."""
    ids = [leg.account.pk for leg in legs]
    return [
        ids,
        [leg.amount for leg in legs],
        [leg.account.kind for leg in legs],
        ids,
        AccountKind.CLEARING.value,
        *(f.get_db_prep_save(f.pre_save(posted, True), connection) for f in _transaction_fields()),
        len(legs),
        ids,
    ]


@functools.cache
def _transaction_fields() -> tuple[Field, ...]:
    """The columns a new transaction row is written with (all but its id)."""
    return tuple(f for f in LedgerTransaction._meta.concrete_fields if not f.primary_key)


def _parameter_type(field: Field) -> str:
    """The type a value of `field` is cast to in `_posting_sql`, where it stands in a SELECT
    list (a prepared statement's parameter there has no type to infer): the column's, but
    a text's length left to the column to check (a cast to varchar(n) would cut a longer
    value short, where the insert refuses it)."""
    if isinstance(field, CharField):
        return connection.ops.cast_char_field_without_max_length
    return field.cast_db_type(connection)


@functools.cache
def _posting_sql() -> str:
    """The statement of `_transaction_write`. Its parameters: the legs' account ids,
    amounts and account kinds (an account is locked only if it is of that kind), the ids
    again, the kind of account that may go below zero (clearing), the transaction row's
    values, the number of legs, and the ids again. The ids' repeats (`= ANY`) find the
    accounts by their key whatever the plan: prepared (`_transaction_write`), the
    statement comes to run on a generic plan, which knows neither the legs nor how many
    they are, and joined to the legs alone it read the whole accounts table twice.

    The insert of the transaction waits for every lock (the count of the locked accounts
    is its condition), and the legs and balances are written only with the row it
    inserted. All run with one snapshot, taken before any lock was waited for; the locks
    return the accounts as last committed (READ COMMITTED), and both the funds' check
    and the new balances are computed from those. Not from the row the update finds in
    the snapshot: its CHECK (no balance below zero) is tested on the new row before the
    update moves on to the row's latest version, so a debit that waited for a credit to
    the same account (a cash-out at another table) would fail on the balance before it.
    Returned: the new transaction's id (None if none was written), how many accounts
    were locked (fewer than the legs: nothing was written), and the legs the balances
    cannot pay (account id, balance, amount)."""
    quote = connection.ops.quote_name
    accounts = quote(LedgerAccount._meta.db_table)
    transactions = quote(LedgerTransaction._meta.db_table)
    entries = quote(LedgerEntry._meta.db_table)
    columns = ", ".join(quote(f.column) for f in _transaction_fields())
    values = ", ".join(f"%s::{_parameter_type(f)}" for f in _transaction_fields())
    key = quote(LedgerTransaction._meta.get_field("idempotency_key").column)
    entry = LedgerEntry._meta
    entry_columns = ", ".join(
        quote(entry.get_field(name).column) for name in ("transaction", "account", "amount")
    )
    return f"""
WITH leg (account_id, amount, kind) AS (
    SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::text[])
), locked AS (
    SELECT account.id, account.kind, account.balance FROM {accounts} AS account
    WHERE account.id = ANY(%s::bigint[])
    AND (account.id, account.kind) IN (SELECT account_id, kind FROM leg)
    ORDER BY account.id FOR UPDATE
), short AS (
    SELECT locked.id, locked.balance, leg.amount FROM locked JOIN leg ON leg.account_id = locked.id
    WHERE locked.kind <> %s AND locked.balance + leg.amount < 0
), posted AS (
    INSERT INTO {transactions} ({columns}) SELECT {values}
    WHERE (SELECT count(*) FROM locked) = %s AND NOT EXISTS (SELECT FROM short)
    ON CONFLICT ({key}) DO NOTHING RETURNING id
), entries AS (
    INSERT INTO {entries} ({entry_columns})
    SELECT posted.id, leg.account_id, leg.amount FROM posted CROSS JOIN leg
), balances AS (
    UPDATE {accounts} AS account SET balance = locked.balance + leg.amount
    FROM posted CROSS JOIN leg JOIN locked ON locked.id = leg.account_id
    WHERE account.id = leg.account_id AND account.id = ANY(%s::bigint[])
)
SELECT (SELECT id FROM posted), (SELECT count(*) FROM locked),
    (SELECT json_agg(json_build_array(id, balance, amount) ORDER BY id) FROM short)
"""  # noqa: S608
