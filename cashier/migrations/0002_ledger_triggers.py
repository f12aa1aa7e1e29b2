"""Ledger invariants in PostgreSQL itself (see the design notes in cashier/models.py).

1. A deferred constraint trigger checks, at commit, that every ledger transaction written
   has at least two legs and that they sum to zero. It fires on the transaction row (so a
   transaction with no legs is caught) and on each leg (so legs added later are too).
2. A trigger makes legs and transactions append-only: UPDATE and DELETE are refused.
   (TRUNCATE, used only to reset a test database, is not a row operation.)

Both raise SQLSTATE class 23 errors, which Django reports as IntegrityError.
"""

from django.db import migrations

BALANCED_SQL = """
CREATE FUNCTION cashier_transaction_balanced() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    txn_id bigint;
    legs integer;
    total numeric;
BEGIN
    IF TG_TABLE_NAME = 'cashier_ledgerentry' THEN
        txn_id := NEW.transaction_id;
    ELSE
        txn_id := NEW.id;
    END IF;
    SELECT count(*), coalesce(sum(amount), 0) INTO legs, total
        FROM cashier_ledgerentry WHERE transaction_id = txn_id;
    IF legs < 2 OR total <> 0 THEN
        RAISE EXCEPTION 'ledger transaction % is unbalanced: % legs summing to %',
            txn_id, legs, total
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER cashier_ledgertransaction_balanced
    AFTER INSERT ON cashier_ledgertransaction
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION cashier_transaction_balanced();

CREATE CONSTRAINT TRIGGER cashier_ledgerentry_balanced
    AFTER INSERT ON cashier_ledgerentry
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION cashier_transaction_balanced();
"""

BALANCED_REVERSE_SQL = """
DROP TRIGGER cashier_ledgerentry_balanced ON cashier_ledgerentry;
DROP TRIGGER cashier_ledgertransaction_balanced ON cashier_ledgertransaction;
DROP FUNCTION cashier_transaction_balanced();
"""

APPEND_ONLY_SQL = """
CREATE FUNCTION cashier_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused (post a reversing transaction instead)',
        TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER cashier_ledgerentry_append_only
    BEFORE UPDATE OR DELETE ON cashier_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION cashier_append_only();

CREATE TRIGGER cashier_ledgertransaction_append_only
    BEFORE UPDATE OR DELETE ON cashier_ledgertransaction
    FOR EACH ROW EXECUTE FUNCTION cashier_append_only();
"""

APPEND_ONLY_REVERSE_SQL = """
DROP TRIGGER cashier_ledgertransaction_append_only ON cashier_ledgertransaction;
DROP TRIGGER cashier_ledgerentry_append_only ON cashier_ledgerentry;
DROP FUNCTION cashier_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("cashier", "0001_initial")]

    operations = [
        migrations.RunSQL(BALANCED_SQL, BALANCED_REVERSE_SQL),
        migrations.RunSQL(APPEND_ONLY_SQL, APPEND_ONLY_REVERSE_SQL),
    ]
