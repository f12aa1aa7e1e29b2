"""Tests of the ledger, the cashier services, pages and API."""
