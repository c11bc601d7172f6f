"""Checks of a rule against the tenant: attributes, user groups and product ids.

Errors are 400 ``rule_invalid`` naming the field (``actions.1.condition.0.field``); unknown product
ids in pin and hide actions are allowed (a product may be imported later) but come back as warnings.
"""

from __future__ import annotations

from dataclasses import dataclass

from aisle.core.errors import AisleError, BadRequest, ErrorCode
from aisle.core.tenancy import TenantConfig
from aisle.search.index.reader import TenantIndex
from aisle.search.model import FilterSpec
from aisle.search.query.filters import filter_clause
from aisle.search.rules.model import BoostAction, FilterAction, HideAction, PinAction, RuleBody


@dataclass(frozen=True)
class RuleWarning:
    """Something accepted but probably not intended, with the field it concerns."""

    field: str
    message: str


class RuleInvalid(BadRequest):
    code = ErrorCode.RULE_INVALID

    def __init__(self, problems: list[dict[str, str]]) -> None:
        first = problems[0]
        super().__init__(f"{first['field']}: {first['message']}", details=problems)


def _check_specs(
    specs: list[FilterSpec], where: str, config: TenantConfig, index: TenantIndex | None
) -> list[dict[str, str]]:
    problems = []
    for j, spec in enumerate(specs):
        field = f"{where}.{j}.field"
        attr = config.attributes.by_name(spec.field)
        if attr is None:
            known = ", ".join(a.name for a in config.attributes.attributes if a.filterable)
            problems.append(
                {"field": field, "message": f"'{spec.field}' is not an attribute of this tenant ({known})"}
            )
        elif not attr.filterable:
            problems.append({"field": field, "message": f"attribute '{spec.field}' is not filterable"})
        elif index is not None:
            try:  # the value's type against the attribute's, as the search will apply it
                filter_clause(index, spec)
            except AisleError as exc:
                problems.append({"field": f"{where}.{j}.value", "message": exc.message})
    return problems


def validate_rule(body: RuleBody, config: TenantConfig, index: TenantIndex | None) -> list[RuleWarning]:
    """Check ``body`` against the tenant; returns warnings.

    ``index`` (the tenant's search index, None without a catalog) checks filter values and product ids.

    Raises:
        RuleInvalid (400): an unknown user group, or a boost/bury/filter clause on a field that does not
            exist or is not filterable, or with a value of the wrong type; ``details`` lists every problem.
    """
    problems: list[dict[str, str]] = []
    group = body.conditions.userGroup
    if group is not None and group not in {g.id for g in config.user_groups.groups}:
        known = ", ".join(g.id for g in config.user_groups.groups) or "none configured"
        problems.append(
            {"field": "conditions.userGroup", "message": f"unknown user group '{group}' (known: {known})"}
        )
    warnings: list[RuleWarning] = []
    known_ids = index.ord_by_id if index is not None else None
    for i, action in enumerate(body.actions):
        if isinstance(action, BoostAction):
            problems += _check_specs(action.condition, f"actions.{i}.condition", config, index)
        elif isinstance(action, FilterAction):
            problems += _check_specs(action.filters, f"actions.{i}.filters", config, index)
        elif isinstance(action, PinAction) and known_ids is not None:
            for j, item in enumerate(action.items):
                if item.productId not in known_ids:
                    warnings.append(
                        RuleWarning(
                            f"actions.{i}.items.{j}.productId",
                            f"product '{item.productId}' is not in the catalog; it will not be shown",
                        )
                    )
        elif isinstance(action, HideAction) and known_ids is not None:
            for j, pid in enumerate(action.productIds):
                if pid not in known_ids:
                    warnings.append(
                        RuleWarning(f"actions.{i}.productIds.{j}", f"product '{pid}' is not in the catalog")
                    )
    if problems:
        raise RuleInvalid(problems)
    return warnings


class RuleMatchesEveryQuery(BadRequest):
    code = ErrorCode.RULE_MATCHES_EVERY_QUERY


def require_reach_confirmed(body: RuleBody) -> None:
    """Refuse to save a rule that fires on every query unless ``appliesToAllQueries`` confirms it.

    A rule with query match ``any`` (the default when ``conditions.query`` is omitted) changes every
    search the moment it is saved, within its time window and user group; a redirect or rewrite then
    takes over the whole shop. Previews do not need the flag.

    Raises:
        RuleMatchesEveryQuery (400 ``rule_matches_every_query``): match ``any`` without the flag.
    """
    if body.conditions.query.match == "any" and not body.appliesToAllQueries:
        raise RuleMatchesEveryQuery(
            "this rule fires on every search (conditions.query.match is 'any'); give a query condition, "
            "or set appliesToAllQueries: true to confirm (POST /rules/preview shows its effect)",
            details=[{"field": "appliesToAllQueries", "message": "required to be true with match 'any'"}],
        )
