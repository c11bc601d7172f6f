"""What every HTTP service shares: the error envelope, health, app construction."""
