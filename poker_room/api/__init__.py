"""API plumbing shared by every app's API (cashier, tables): one error body, one role check.

Apps depend on this package, never on each other's API modules for it, so that the
layers stay `accounts <- cashier <- tables` (tests/foundation/test_app_boundaries.py).
"""
