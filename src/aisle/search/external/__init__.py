"""External retail search backends (``crs_config.json``): protocol, errors, resolver, backends."""
