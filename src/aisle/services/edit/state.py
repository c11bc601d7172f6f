"""The resources of one edit process, kept in ``app.state.edit`` and reached through :mod:`.deps`."""

from __future__ import annotations

from dataclasses import dataclass

from aisle.behaviour.engine import BehaviourEngine
from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings
from aisle.recs.editing import RecsEditor


@dataclass
class EditState:
    """Resources of one edit process (``app.state.edit``)."""

    settings: Settings
    editor: RecsEditor
    behaviour: BehaviourEngine
    authorizer: Authorizer
