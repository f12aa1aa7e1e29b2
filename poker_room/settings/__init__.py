"""Settings split by environment: `base` holds everything; `dev`, `test`, `production` adjust it."""
