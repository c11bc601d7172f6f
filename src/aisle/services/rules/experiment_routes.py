"""Routes of the experiments API (A/B tests) on the rules service: parse, call one front door, shape.

Every route relays to :class:`~aisle.experiments.admin.ExperimentAdmin` (``state.experiments``), the
front door of experiments on both surfaces. They are served here because this service owns most of
what a variant changes (the tenant's merchandising rules, ranker and pipeline settings) and serves the
console.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response

from aisle.core.auth.scopes import ANALYTICS_READ, RULES_WRITE, SEARCH_READ
from aisle.core.validation import ID_PATTERN
from aisle.experiments.model import Experiment, ExperimentBody
from aisle.services.common.auth import require_scope
from aisle.services.common.errors import error_responses
from aisle.services.common.params import TenantQuery
from aisle.services.rules.experiment_schemas import (
    ExperimentHistory,
    ExperimentList,
    ExperimentReplace,
    ExperimentResults,
    ExperimentVersionOut,
    Promote,
    SampleSize,
)
from aisle.services.rules.state import State

router = APIRouter(tags=["experiments"])
read = Depends(require_scope(SEARCH_READ))
write = Depends(require_scope(RULES_WRITE))
analytics = Depends(require_scope(ANALYTICS_READ))
ExperimentId = Annotated[str, Path(pattern=ID_PATTERN, description="The experiment's id.")]


@router.post(
    "/experiments",
    status_code=201,
    response_model=Experiment,
    dependencies=[write],
    responses=error_responses(400, 401, 403, 404, 422),
    summary="Create an experiment (a draft)",
)
def create_experiment(
    state: State, tenant: TenantQuery, body: ExperimentBody, response: Response
) -> Experiment:
    """Store a draft: 2 to 5 variants (the first is the control) with traffic weights and changes.
    A change the tenant cannot serve (an unknown rule or ranker version, a setting that does not
    validate) gets 400 ``experiment_invalid``."""
    experiment = state.experiments.create(tenant, body)
    response.headers["Location"] = f"/experiments/{experiment.id}?tenant={tenant}"
    return experiment


@router.get(
    "/experiments",
    response_model=ExperimentList,
    dependencies=[read],
    responses=error_responses(401, 403, 404, 422),
    summary="List experiments",
)
def list_experiments(state: State, tenant: TenantQuery) -> ExperimentList:
    """The tenant's experiments, newest first."""
    return ExperimentList(experiments=state.experiments.experiments(tenant))


@router.get(
    "/experiments/sample-size",
    response_model=SampleSize,
    dependencies=[read],
    responses=error_responses(400, 401, 403, 404, 422),
    summary="Visitors an experiment needs",
)
def experiment_sample_size(
    state: State,
    tenant: TenantQuery,
    baseline: Annotated[float, Query(gt=0, lt=1, description="The control's conversion rate per visitor.")],
    mde: Annotated[float, Query(gt=0, le=10, description="Relative lift to detect (0.05: +5%).")] = 0.05,
    variants: Annotated[int, Query(ge=2, le=5, description="Variants, equal weights.")] = 2,
) -> SampleSize:
    """Visitors per variant and in total for a two-sided test at alpha 0.05 with power 0.8."""
    return SampleSize.model_validate(state.experiments.sample_size(tenant, baseline, mde, variants))


@router.get(
    "/experiments/{experiment_id}",
    response_model=Experiment,
    dependencies=[read],
    responses=error_responses(401, 403, 404, 422),
    summary="Get an experiment",
)
def get_experiment(state: State, tenant: TenantQuery, experiment_id: ExperimentId) -> Experiment:
    """One experiment (404 ``experiment_not_found``)."""
    return state.experiments.get(tenant, experiment_id)


@router.put(
    "/experiments/{experiment_id}",
    response_model=Experiment,
    dependencies=[write],
    responses=error_responses(400, 401, 403, 404, 409, 422),
    summary="Replace a draft",
)
def replace_experiment(
    state: State, tenant: TenantQuery, experiment_id: ExperimentId, body: ExperimentReplace
) -> Experiment:
    """Replace a draft naming the version read (409 ``experiment_version_conflict`` when stale,
    ``experiment_state_conflict`` once started)."""
    draft = ExperimentBody.model_validate(body.model_dump(exclude={"version"}))
    return state.experiments.replace(tenant, experiment_id, draft, body.version)


@router.get(
    "/experiments/{experiment_id}/history",
    response_model=ExperimentHistory,
    dependencies=[read],
    responses=error_responses(401, 403, 404, 422),
    summary="Versions of an experiment",
)
def experiment_history(state: State, tenant: TenantQuery, experiment_id: ExperimentId) -> ExperimentHistory:
    """Every version, newest first: each change and each start, stop and promotion is one."""
    versions = [
        ExperimentVersionOut(version=n, deleted=experiment is None, experiment=experiment)
        for n, experiment in state.experiments.history(tenant, experiment_id)
    ]
    return ExperimentHistory(experimentId=experiment_id, versions=versions)


@router.post(
    "/experiments/{experiment_id}/start",
    response_model=Experiment,
    dependencies=[write],
    responses=error_responses(401, 403, 404, 409, 422),
    summary="Start an experiment",
)
def start_experiment(state: State, tenant: TenantQuery, experiment_id: ExperimentId) -> Experiment:
    """Start a draft: search (and predict) processes assign visitors from their next request."""
    return state.experiments.start(tenant, experiment_id)


@router.post(
    "/experiments/{experiment_id}/stop",
    response_model=Experiment,
    dependencies=[write],
    responses=error_responses(401, 403, 404, 409, 422),
    summary="Stop an experiment",
)
def stop_experiment(state: State, tenant: TenantQuery, experiment_id: ExperimentId) -> Experiment:
    """Stop a running experiment: every visitor gets the live setting again; results stay readable."""
    return state.experiments.stop(tenant, experiment_id)


@router.post(
    "/experiments/{experiment_id}/promote",
    response_model=Experiment,
    dependencies=[write],
    responses=error_responses(400, 401, 403, 404, 409, 422),
    summary="Promote a variant",
)
def promote_experiment(
    state: State, tenant: TenantQuery, experiment_id: ExperimentId, body: Promote
) -> Experiment:
    """Make the variant's search changes the live setting (rules, settings, ranker) and end the
    experiment (400 ``experiment_invalid`` for an unknown variant)."""
    return state.experiments.promote(tenant, experiment_id, body.variant)


@router.get(
    "/experiments/{experiment_id}/results",
    response_model=ExperimentResults,
    dependencies=[analytics],
    responses=error_responses(401, 403, 404, 422),
    summary="Results of an experiment",
)
def experiment_results(state: State, tenant: TenantQuery, experiment_id: ExperimentId) -> ExperimentResults:
    """Per variant: visitors, searches, conversion rate, click-through rate and revenue per visitor
    with 95% intervals; each treatment against control (difference, interval, p-value, BH-adjusted);
    the sample-ratio-mismatch check; the winner on the primary metric; the sample size the test needs
    at the control's conversion rate. Formulas: docs/experiments.md."""
    return ExperimentResults.model_validate(state.experiments.results(tenant, experiment_id))
