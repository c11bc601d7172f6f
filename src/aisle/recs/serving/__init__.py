"""Recommendation serving (``POST /predict``, ``/evaluation``, bundles) behind one :class:`PredictEngine`.

The predict service imports this front door only. One job per module:

* ``engine``: :class:`PredictEngine`, routes a request by container and runs its slots;
* ``query`` / ``items``: what a request asks (:class:`PredictQuery`) and gets back (:class:`ItemOut`);
* ``tenants``: configuration and product table of each tenant, cached (:class:`TenantCache`);
  ``table_changes`` applies the catalog change log to a table, ``follower`` does so in a thread
  (:class:`TableFollower`); ``stock`` is the tenant's out-of-stock policy and a request's store;
* ``cold_start``: similar items of a product the model does not know, from its vectors
  (:class:`VectorNeighbours`);
* ``containers``: containers read at most once per TTL (:class:`ContainerCache`);
* ``models``: loaded, deployed models (:class:`RegistryModelSource`); ``warmup`` loads them early;
* ``products``, ``conditions``, ``rank``: the catalog by product id, FILTER / BOOST / BURY conditions,
  and the ranking of one slot (backfill, MMR diversity);
* ``backfill``, ``popularity``: what fills a short list (the seeds' categories, the tenant's most
  popular products) and the tenant's popularity artifact that orders it;
* ``saved_rules``: a container's saved recommendation rules, put before the request's actions;
* ``personal``: the visitor's session and purchases, the user's brand affinity (:class:`Personaliser`);
* ``bundles``: bundle plans and candidates (:class:`Bundles`, the engine's ``bundles``);
* ``evaluation``: one named model through the same ranking (:class:`ModelEvaluation`).
"""

from aisle.recs.actions import MAX_ACTIONS, PredictAction
from aisle.recs.serving.bundles import BundleModelNotFound, Bundles
from aisle.recs.serving.cold_start import VectorNeighbours
from aisle.recs.serving.containers import ContainerCache
from aisle.recs.serving.engine import PredictEngine
from aisle.recs.serving.evaluation import ModelEvaluation
from aisle.recs.serving.follower import TableFollower
from aisle.recs.serving.items import ItemOut, Prediction
from aisle.recs.serving.models import ModelSource, RegistryModelSource, ServedModel
from aisle.recs.serving.personal import Personal, Personaliser
from aisle.recs.serving.query import PredictParams, PredictQuery
from aisle.recs.serving.tenants import TenantCache

__all__ = [
    "MAX_ACTIONS",
    "BundleModelNotFound",
    "Bundles",
    "ContainerCache",
    "ItemOut",
    "ModelEvaluation",
    "ModelSource",
    "Personal",
    "Personaliser",
    "PredictAction",
    "PredictEngine",
    "PredictParams",
    "PredictQuery",
    "Prediction",
    "RegistryModelSource",
    "ServedModel",
    "TableFollower",
    "TenantCache",
    "VectorNeighbours",
]
