"""The recommendation predict service (port 8081)."""
