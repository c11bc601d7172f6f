"""``aisle ranker train | list | use | off``: a tenant's learned search ranker (learning to rank)."""

from __future__ import annotations

from pathlib import Path

import typer

from aisle.cli.common import fail, settings_and_tenants
from aisle.core.errors import AisleError

ranker_app = typer.Typer(
    help="Learned rankers for search (LightGBM LambdaMART trained on graded judgments).", no_args_is_help=True
)


def _context(tenant: str):  # type: ignore[no-untyped-def]
    """Settings, tenants and the ranker store; exits with ``tenant_not_found`` for an unknown tenant."""
    from aisle.core.errors import TenantNotFound
    from aisle.search.ranking.store import RankerStore

    settings, tenants = settings_and_tenants()
    if not tenants.exists(tenant):
        fail(TenantNotFound(tenant))
    return settings, tenants, RankerStore(tenants.store)


@ranker_app.command("train")
def train(
    tenant: str = typer.Argument(..., help="Tenant whose searches to rank."),
    judgments: Path | None = typer.Option(
        None, exists=True, dir_okay=False, help="CSV of query,product_id,relevance (1 irrelevant .. 3 exact)."
    ),
    source: str = typer.Option(
        "judgments",
        help="judgments (the CSV), or behaviour: the tenant's logged searches and clicks, debiased for "
        "position; deployed only above the traffic threshold. behaviour with --judgments: judgment labels "
        "and behaviour features.",
    ),
    folds: int = typer.Option(5, min=0, max=20, help="Cross-validation folds by query (0: skip)."),
    rounds: int = typer.Option(150, min=10, max=5000, help="Boosting rounds."),
    use: bool = typer.Option(True, help="Point the tenant's searches at the new version."),
) -> None:
    """Train a ranker on judged queries (report its cross-validated NDCG@10) or on the tenant's behaviour
    log, and save it as a new version."""
    from aisle.search.evaluation import load_judgments
    from aisle.search.training.ranker import train_ranker

    if source not in ("judgments", "behaviour"):
        fail(f"--source must be judgments or behaviour, not '{source}'")
    if source == "judgments" and judgments is None:
        fail("--source judgments needs --judgments PATH")
    settings, tenants, _ = _context(tenant)
    qrels = None
    if judgments is not None:
        try:
            qrels = load_judgments(judgments)
        except (KeyError, ValueError) as exc:
            fail(f"{judgments}: not a query,product_id,relevance CSV ({exc})")
    if source == "behaviour":
        train_from_behaviour(settings, tenants, tenant, qrels, rounds=rounds, use=use)
        return
    assert qrels is not None
    try:
        record = train_ranker(
            tenants,
            tenant,
            settings.data_dir,
            qrels,
            folds=folds,
            rounds=rounds,
            use=use,
            progress=lambda line: typer.echo(f"{tenant}: {line}", err=True),
        )
    except AisleError as exc:
        fail(exc)
    cv = "not measured"
    if record.cv_ndcg10 is not None:
        cv = f"{record.cv_ndcg10:.4f} ({record.folds}-fold CV)"
    typer.echo(
        f"{tenant}: ranker v{record.version} on {record.queries} queries, {record.candidates} candidates; "
        f"NDCG@10 {cv}, pipeline without it {record.baseline_ndcg10:.4f}"
        + ("; in use" if use else "; not in use (aisle ranker use)")
    )


def train_from_behaviour(settings, tenants, tenant: str, qrels, *, rounds: int, use: bool) -> None:  # type: ignore[no-untyped-def]
    """Refresh the tenant's behaviour features, train the click ranker on them and say what happened."""
    from aisle.analytics.log import ParquetLog
    from aisle.behaviour.rankers import click_log
    from aisle.behaviour.store import refresh
    from aisle.search.training.clicks import MIN_CLICKS, MIN_SEARCHES, train_click_ranker

    try:
        behaviour = refresh(ParquetLog(tenants.store, Path(settings.data_dir) / "analytics"), tenant)
        if qrels is not None:  # judgments with the behaviour features (the bench's best row)
            from aisle.search.ranking.behaviour import BehaviourTables
            from aisle.search.training.clicks import may_deploy
            from aisle.search.training.ranker import train_ranker

            deployed = use and may_deploy(behaviour.searches, behaviour.clicks)
            record = train_ranker(
                tenants,
                tenant,
                settings.data_dir,
                qrels,
                folds=0,
                rounds=rounds,
                use=deployed,
                behaviour=BehaviourTables(tenants.store).current(tenant),
            )
            typer.echo(
                f"{tenant}: ranker v{record.version} on judgments + behaviour features; "
                + ("in use" if deployed else "not in use (under the traffic threshold)")
            )
            return
        from aisle.search.ranking.behaviour import BehaviourTables

        record, deployed = train_click_ranker(
            tenants,
            tenant,
            settings.data_dir,
            click_log(tenants.store, tenant, behaviour.version),
            judgments=qrels,
            rounds=rounds,
            use=use,
            progress=lambda line: typer.echo(f"{tenant}: {line}", err=True),
            behaviour=BehaviourTables(tenants.store, check_every=0).current(tenant),
        )
    except AisleError as exc:
        fail(exc)
    bias = "estimated from the log" if behaviour.propensities else "learned by LightGBM (one ranking logged)"
    state = (
        "in use"
        if deployed
        else (
            f"not in use (under the threshold of {MIN_SEARCHES} searches and {MIN_CLICKS} clicks)"
            if use
            else "not in use"
        )
    )
    typer.echo(
        f"{tenant}: ranker v{record.version} from behaviour v{behaviour.version} "
        f"({behaviour.searches} searches, "
        f"{behaviour.clicks} clicks; position bias {bias}) on {record.queries} queries; {state}"
    )


@ranker_app.command("list")
def list_versions(tenant: str = typer.Argument(...)) -> None:
    """The tenant's ranker versions with their figures; * marks the one in use."""
    _, _, store = _context(tenant)
    try:
        current = store.in_use(tenant)
        records = store.versions(tenant)
    except AisleError as exc:
        fail(exc)
    if not records:
        typer.echo(f"{tenant}: no ranker trained (aisle ranker train)")
    for r in records:
        cv = f"{r.cv_ndcg10:.4f}" if r.cv_ndcg10 is not None else "-"
        mark = "*" if r.version == current else " "
        typer.echo(
            f"{mark} v{r.version}  {r.created:%Y-%m-%d %H:%M}  queries {r.queries}  CV NDCG@10 {cv}  "
            f"baseline {r.baseline_ndcg10}  catalog {r.catalog_version}  source {r.source}"
        )


@ranker_app.command("use")
def use_version(tenant: str = typer.Argument(...), version: int = typer.Argument(..., min=1)) -> None:
    """Point the tenant's searches at ranker VERSION (roll back or forward)."""
    _, _, store = _context(tenant)
    try:
        store.use(tenant, version)
    except AisleError as exc:
        fail(exc)
    typer.echo(f"{tenant}: searches use ranker v{version}")


@ranker_app.command("off")
def off(tenant: str = typer.Argument(...)) -> None:
    """Stop using a learned ranker for the tenant (its versions are kept)."""
    _, _, store = _context(tenant)
    try:
        store.use(tenant, None)
    except AisleError as exc:
        fail(exc)
    typer.echo(f"{tenant}: learned ranker off")


def register(app: typer.Typer) -> None:
    app.add_typer(ranker_app, name="ranker")
