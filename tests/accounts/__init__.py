"""Tests of sign-up, log-in, profile and roles."""
