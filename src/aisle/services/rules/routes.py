"""Routes of the rule management service: parse, call the rules engine, shape the response."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Path, Query, Response

from aisle.catalog.store import CatalogNotFound
from aisle.core.auth.scopes import RULES_WRITE, SEARCH_READ
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.tenancy import TenantConfig
from aisle.search.index.reader import TenantIndex
from aisle.search.rules.model import RULE_ID_PATTERN, Rule, RuleBody
from aisle.search.rules.store import RuleStore
from aisle.search.rules.validation import RuleWarning, require_reach_confirmed, validate_rule
from aisle.services.common.auth import require_scope
from aisle.services.common.errors import error_responses
from aisle.services.common.params import TenantQuery
from aisle.services.rules.schemas import (
    Move,
    PreviewChanges,
    PreviewRequest,
    PreviewResponse,
    RuleCreate,
    RuleHistory,
    RuleList,
    RuleReplace,
    RuleSaved,
    RuleVersion,
    RuleWarningOut,
)
from aisle.services.rules.state import RulesState, State

router = APIRouter()
read = Depends(require_scope(SEARCH_READ))
write = Depends(require_scope(RULES_WRITE))
RuleId = Annotated[str, Path(pattern=RULE_ID_PATTERN, description="The rule's id.")]
IfMatch = Annotated[str | None, Header(alias="If-Match", description='The version read, as an ETag: "3".')]
_ETAG = re.compile(r'^\s*(?:W/)?"?(\d{1,9})"?\s*$')
DRAFT_ID = "draft"


def parse_if_match(value: str | None) -> int | None:
    """The version in an ``If-Match`` header (``"3"``, ``W/"3"`` or ``3``). Raises BadRequest."""
    if value is None:
        return None
    m = _ETAG.match(value)
    if not m:
        raise BadRequest(
            f"If-Match '{value}' is not a rule version such as \"3\"", code=ErrorCode.IF_MATCH_INVALID
        )
    return int(m.group(1))


def version_to_match(given: int | None, if_match: str | None, disagree: str) -> int | None:
    """The version a write must find: ``given`` (body or query) or the ``If-Match`` one, None for neither.

    Raises BadRequest: ``if_match_invalid``, or ``version_mismatch`` (message ``disagree``, formatted
    with ``given`` and ``header``) when both are given and differ.
    """
    header = parse_if_match(if_match)
    if given is not None and header is not None and given != header:
        raise BadRequest(disagree.format(given=given, header=header), code=ErrorCode.VERSION_MISMATCH)
    return given if given is not None else header


def _warnings(warnings: list[RuleWarning]) -> list[RuleWarningOut]:
    return [RuleWarningOut(field=w.field, message=w.message) for w in warnings]


def tenant_parts(state: RulesState, tenant: str) -> tuple[TenantConfig, RuleStore]:
    config = state.tenants.config(tenant)  # TenantNotFound (404) for an unknown tenant
    return config, RuleStore(state.tenants.scope(tenant))


def index_or_none(state: RulesState, tenant: str) -> TenantIndex | None:
    try:
        return state.indexes.get(tenant)
    except CatalogNotFound:
        return None


def check(state: RulesState, tenant: str, config: TenantConfig, body: RuleBody) -> list[RuleWarningOut]:
    return _warnings(validate_rule(body, config, index_or_none(state, tenant)))


@router.post(
    "/rules",
    status_code=201,
    response_model=RuleSaved,
    dependencies=[write],
    responses=error_responses(401, 403, 404, 409, 422),
    summary="Create a rule",
)
def create_rule(state: State, tenant: TenantQuery, body: RuleCreate, response: Response) -> RuleSaved:
    """Validate and store a new rule at version 1 (409 ``rule_exists`` when the id is taken)."""
    config, rules = tenant_parts(state, tenant)
    rule_body = RuleBody.model_validate(body.model_dump(exclude={"id"}))
    require_reach_confirmed(rule_body)
    warnings = check(state, tenant, config, rule_body)
    rule = rules.create(rule_body, body.id)
    response.headers["ETag"] = f'"{rule.version}"'
    response.headers["Location"] = f"/rules/{rule.id}?tenant={tenant}"
    return RuleSaved(rule=rule, warnings=warnings)


@router.get(
    "/rules",
    response_model=RuleList,
    dependencies=[read],
    responses=error_responses(401, 403, 404, 422),
    summary="List rules",
)
def list_rules(
    state: State,
    tenant: TenantQuery,
    enabled: Annotated[bool | None, Query(description="Only enabled (true) or disabled (false).")] = None,
    offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> RuleList:
    """The tenant's rules, highest priority first (then by id), a page at a time."""
    _, rules = tenant_parts(state, tenant)
    everything = [r for r in rules.list() if enabled is None or r.enabled == enabled]
    page = everything[offset : offset + limit]
    return RuleList(rules=page, total=len(everything), offset=offset, limit=limit)


@router.get(
    "/rules/{rule_id}",
    response_model=Rule,
    dependencies=[read],
    responses=error_responses(401, 403, 404, 422),
    summary="Get a rule",
)
def get_rule(state: State, tenant: TenantQuery, rule_id: RuleId, response: Response) -> Rule:
    """One rule (404 ``rule_not_found``); its version is also the ``ETag``."""
    _, rules = tenant_parts(state, tenant)
    rule = rules.get(rule_id)
    response.headers["ETag"] = f'"{rule.version}"'
    return rule


@router.get(
    "/rules/{rule_id}/versions",
    response_model=RuleHistory,
    dependencies=[read],
    responses=error_responses(401, 403, 404, 422),
    summary="Version history of a rule",
)
def rule_history(state: State, tenant: TenantQuery, rule_id: RuleId) -> RuleHistory:
    """Every version of the rule, newest first, deleted ones as tombstones (404 for an id never used).

    Versions are immutable; to revert, ``PUT`` an old version's rule naming the current version."""
    _, rules = tenant_parts(state, tenant)
    return RuleHistory(
        ruleId=rule_id,
        versions=[RuleVersion(version=n, deleted=r is None, rule=r) for n, r in rules.history(rule_id)],
    )


@router.put(
    "/rules/{rule_id}",
    response_model=RuleSaved,
    dependencies=[write],
    responses=error_responses(400, 401, 403, 404, 409, 422),
    summary="Replace a rule",
)
def replace_rule(
    state: State,
    tenant: TenantQuery,
    rule_id: RuleId,
    body: RuleReplace,
    response: Response,
    if_match: IfMatch = None,
) -> RuleSaved:
    """Replace the whole rule; give the version read in the body or as ``If-Match``.

    A stale version gets 409 ``rule_version_conflict`` and nothing changes: re-read and retry.
    """
    version = version_to_match(
        body.version, if_match, "version {given} in the body and {header} in If-Match disagree"
    )
    if body.id is not None and body.id != rule_id:
        raise BadRequest(
            f"body id '{body.id}' is not the path's '{rule_id}'", code=ErrorCode.RULE_ID_MISMATCH
        )
    if version is None:
        raise BadRequest(  # the schema cannot say "one of a body field and a header": a rule, 400
            "version: required, in the body or as If-Match",
            code=ErrorCode.VALUE_INVALID,
            details=[{"field": "body.version", "message": "required, in the body or as If-Match"}],
        )
    config, rules = tenant_parts(state, tenant)
    rule_body = RuleBody.model_validate(body.model_dump(exclude={"version", "id", "createdAt", "updatedAt"}))
    require_reach_confirmed(rule_body)
    warnings = check(state, tenant, config, rule_body)
    rule = rules.replace(rule_id, rule_body, version)
    response.headers["ETag"] = f'"{rule.version}"'
    return RuleSaved(rule=rule, warnings=warnings)


@router.delete(
    "/rules/{rule_id}",
    status_code=204,
    dependencies=[write],
    responses=error_responses(400, 401, 403, 404, 409, 422),
    summary="Delete a rule",
)
def delete_rule(
    state: State,
    tenant: TenantQuery,
    rule_id: RuleId,
    version: Annotated[int | None, Query(ge=1, description="Delete only at this version.")] = None,
    if_match: IfMatch = None,
) -> Response:
    """Delete the rule; with ``version`` (or ``If-Match``) only while it is at that version (else 409)."""
    at_version = version_to_match(version, if_match, "version {given} and If-Match {header} disagree")
    _, rules = tenant_parts(state, tenant)
    rules.delete(rule_id, at_version)
    return Response(status_code=204)


@router.post(
    "/rules/preview",
    response_model=PreviewResponse,
    dependencies=[read],
    responses=error_responses(400, 401, 403, 404, 422),
    summary="Preview a rule on a search",
)
def preview(state: State, tenant: TenantQuery, body: PreviewRequest) -> PreviewResponse:
    """Run the search without and with the rule (a draft, a stored rule, or a draft edit of one; neither:
    the live page on both sides).

    Returns both results and what changed on the page (added, removed, moved, totals, redirect).
    """
    config, rules = tenant_parts(state, tenant)
    index = state.indexes.get(tenant)
    warnings: list[RuleWarningOut] = []
    if body.rule is not None:
        warnings = _warnings(validate_rule(body.rule, config, index))
        stored = rules.get(body.ruleId) if body.ruleId else None
        rule = Rule(
            **body.rule.model_dump(),
            id=body.ruleId or DRAFT_ID,
            version=stored.version + 1 if stored else 1,
            createdAt=stored.createdAt if stored else datetime.now(UTC),
            updatedAt=datetime.now(UTC),
        )
    elif body.ruleId is not None:
        rule = rules.get(body.ruleId)
    else:  # nothing to preview yet: the live page on both sides
        live = state.engine.search(tenant, body.search.search_query())
        unchanged = PreviewChanges(
            fired=False,
            totalBefore=live.total,
            totalAfter=live.total,
            redirectBefore=live.redirect,
            redirectAfter=live.redirect,
        )
        return PreviewResponse(withoutRule=live, withRule=live, changes=unchanged, warnings=[])
    s = body.search
    result = state.engine.preview(tenant, s.search_query(), rule, replaces=body.ruleId, at=body.at)
    changes = result.changes
    return PreviewResponse(
        withoutRule=result.without_rule,
        withRule=result.with_rule,
        changes=PreviewChanges(
            **{k: v for k, v in changes.items() if k != "moved"},
            moved=[Move(**m) for m in changes["moved"]],
        ),
        warnings=warnings,
    )
