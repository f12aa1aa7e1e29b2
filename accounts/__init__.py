"""Players, auditors and staff: the user model, sign-up, log-in and preferences."""
