"""The rule management service (port 8085)."""
