"""Tests of the hand-history API, its formats, its schema and docs page."""
