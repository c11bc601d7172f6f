"""The analytics service (port 8087)."""
