"""audit_ledger."""
