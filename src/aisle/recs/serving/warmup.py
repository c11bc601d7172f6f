"""Deployed models loaded ahead of traffic, so no request pays for loading a model or catalog.

The predict service runs :func:`warm_deployed` at start-up and then every couple of seconds, so a deploy
made through the edit service is loaded before the first request needs it.
"""

from __future__ import annotations

import logging

from aisle.core.errors import AisleError
from aisle.recs.deployments import Deployments
from aisle.recs.serving.models import ModelSource
from aisle.recs.serving.tenants import TenantCache

log = logging.getLogger("aisle.predict")


def warm_deployed(tenants: TenantCache, models: ModelSource) -> int:
    """Load every deployed model of every tenant (and the tenant's catalog and popularity artifact)
    into the caches.

    Returns the number of models ready. A tenant whose configuration or catalog cannot be read is
    logged and skipped; a model that fails to load is logged and retried on the next pass.
    """
    ready = 0
    for tenant in tenants.tenants.names():
        try:
            config, state = tenants.get(tenant)
            tenants.table(config, state)
            tenants.popularity(state)
            model_ids = Deployments(state.scope).deployed_ids()
        except AisleError as exc:
            log.warning("warm-up of tenant %s skipped: %s", tenant, exc.message)
            continue
        for model_id in model_ids:
            try:
                models.served(tenant, state.scope, model_id)
                ready += 1
            except Exception:
                log.exception("warm-up of model %s/%s failed", tenant, model_id)
    return ready
