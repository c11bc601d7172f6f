"""The merchandising console: a web UI for search rules, recommendation rules and containers.

Served by the rule management service (:func:`aisle.services.rules.console.pages.mount_console`);
see docs/console.md.
"""
