"""The recommendation edit service (port 8084)."""
