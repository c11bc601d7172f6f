"""A container's saved recommendation rules, applied by the engine before the request's own actions.

A container (placement) keeps the FILTER / BOOST / BURY rules a merchandiser authored for it
(``recommendationRules``, see :mod:`aisle.recs.actions`). They belong to every answer the container gives,
whoever asks: ``POST /predict`` on the predict service, the search service's ``POST /recommendations``
(a plain relay to it) and bundle recommendations served from the container's bundle slot. The rules run
first, then the request's ``actions``, as one list: an action's ``index`` in the debug output counts the
saved rules first.
"""

from __future__ import annotations

from collections.abc import Sequence

from aisle.core.errors import BadRequest, ErrorCode
from aisle.recs.actions import MAX_ACTIONS, PredictAction
from aisle.recs.containers import Container


def with_saved_rules(
    container: Container, actions: Sequence[PredictAction], *, slot_id: str | None = None
) -> Sequence[PredictAction]:
    """The container's saved rules followed by ``actions`` (``actions`` itself when it has none).

    With ``slot_id`` (a caller serving that one slot alone: bundles), only the rules naming no slot or
    that one are kept, with their ``slotConfigId`` dropped.

    Raises:
        BadRequest: ``value_invalid`` (400) when the rules and the actions together are over
            :data:`~aisle.recs.actions.MAX_ACTIONS` (50), the spec's bound on a request's actions.
    """
    saved = container.recommendationRules
    if slot_id is not None:
        saved = [
            r.model_copy(update={"slotConfigId": None}) for r in saved if r.slotConfigId in (None, slot_id)
        ]
    if not saved:
        return actions
    if len(saved) + len(actions) > MAX_ACTIONS:
        raise BadRequest(
            f"container '{container.containerId}' has {len(saved)} rules; with the request's "
            f"{len(actions)} actions that is over {MAX_ACTIONS}",
            code=ErrorCode.VALUE_INVALID,
        )
    return [*saved, *actions]
