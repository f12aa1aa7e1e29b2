"""The hand-history REST API (DRF): lists, full records, PHH/PokerStars/OHH, exports, the
deck-commitment check. Mounted at /api/ (see urls.py; README "Hand-history API")."""
