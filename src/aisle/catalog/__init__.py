"""Tenant product catalogs: schema mapping, import, versioned storage."""
