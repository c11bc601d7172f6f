"""``aisle auth ...``: register clients, rotate keys, get tokens.

Commands::

    aisle auth add-client --tenants fashion,homedepot --scopes search:read,recs:read [--client-id ID]
                          [--alg ES256|RS256|EdDSA] [--public-key FILE.pem] [--key-out FILE.pem]
    aisle auth list-clients
    aisle auth remove-client ID
    aisle auth token --client-id ID --key-file FILE.pem [--scope "search:read"]
    aisle auth rotate-keys
    aisle auth demo-client [--key-file var/auth/demo-client.pem]
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError

from aisle.cli.common import fail
from aisle.core.errors import AisleError

auth_app = typer.Typer(help="Clients, keys and tokens of the token service.", no_args_is_help=True)

DEMO_CLIENT_ID = "demo"
DEMO_TENANTS = ("fashion", "homedepot")


def _split(value: str) -> list[str]:
    return [p.strip() for p in value.split(",") if p.strip()]


def _context() -> tuple[Any, Any]:
    from aisle.core.config import load_settings
    from aisle.core.storage.resolver import open_blob_store_from_settings

    settings = load_settings()
    return settings, open_blob_store_from_settings(settings)


def _write_private(path: Path, pem: bytes) -> None:
    """Write a private key readable by its owner only (0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)


@auth_app.command("add-client")
def add_client(
    tenants: str = typer.Option(..., help="Comma-separated tenants the client may act on."),
    scopes: str = typer.Option(..., help="Comma-separated scopes: search:read,recs:read,recs:write,..."),
    client_id: str = typer.Option(None, "--client-id", help="Client id (default: generated)."),
    alg: str = typer.Option("ES256", help="Key algorithm to generate: ES256, RS256 or EdDSA."),
    public_key: Path = typer.Option(None, help="Register this PEM public key instead of generating one."),
    key_out: Path = typer.Option(None, help="Write the generated private key here (0600) instead of stdout."),
    replace: bool = typer.Option(False, help="Overwrite an existing client with this id."),
) -> None:
    """Register a client; prints the generated private key PEM once (it is not stored)."""
    from aisle.core.auth.clients import (
        ClientRecord,
        ClientRegistry,
        generate_client_key,
        load_public_key_pem,
        new_client_id,
        public_jwk,
    )

    _, store = _context()
    registry = ClientRegistry(store, ttl=0)
    cid = client_id or new_client_id()
    try:
        if registry.get(cid) is not None and not replace:
            fail(f"client '{cid}' already exists (use --replace to overwrite it)")
        private = None
        if public_key is not None:
            jwk = load_public_key_pem(public_key.read_bytes())
        else:
            private = generate_client_key(alg)
            jwk = public_jwk(private)
        record = ClientRecord(client_id=cid, tenants=_split(tenants), scopes=_split(scopes), jwk=jwk)
        registry.put(record)
    except AisleError as exc:
        fail(exc.message)
        return
    except ValidationError as exc:
        err = exc.errors()[0]
        fail(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}")
        return
    typer.secho(
        f"client {record.client_id}: tenants {','.join(record.tenants)}; scopes {','.join(record.scopes)}; "
        f"alg {record.alg}",
        err=True,
    )
    if private is not None:
        pem = private.as_pem(private=True)
        if key_out is not None:
            _write_private(key_out, pem)
            typer.secho(f"private key written to {key_out}", err=True)
        else:
            typer.secho("private key (shown once, keep it secret):", err=True)
            typer.echo(pem.decode(), nl=False)


@auth_app.command("list-clients")
def list_clients() -> None:
    """One line per client: id, tenants, scopes, algorithm, disabled."""
    from aisle.core.auth.clients import ClientRegistry

    _, store = _context()
    for record in ClientRegistry(store, ttl=0).list():
        state = " disabled" if record.disabled else ""
        typer.echo(
            f"{record.client_id}\t{','.join(record.tenants)}\t{','.join(record.scopes)}\t{record.alg}{state}"
        )


@auth_app.command("remove-client")
def remove_client(client_id: str) -> None:
    """Delete a client; its tokens stay valid until they expire (at most 15 minutes)."""
    from aisle.core.auth.clients import ClientRegistry

    _, store = _context()
    registry = ClientRegistry(store, ttl=0)
    if registry.get(client_id) is None:
        fail(f"no client '{client_id}'")
    registry.delete(client_id)
    typer.echo(f"removed {client_id}")


@auth_app.command("rotate-keys")
def rotate_keys() -> None:
    """New signing key; old keys stay published until the tokens they signed have expired."""
    from aisle.core.auth.keys import SigningKeys

    _, store = _context()
    keys = SigningKeys(store)
    created = keys.rotate()
    published = [k.kid for k in keys.published()]
    typer.echo(f"active key {created.kid}; published: {', '.join(published)}")


@auth_app.command("token")
def token(
    client_id: str = typer.Option(..., "--client-id", help="The registered client id."),
    key_file: Path = typer.Option(..., help="The client's private key (PEM)."),
    scope: str = typer.Option(None, help="Space-separated subset of the client's scopes."),
    auth_url: str = typer.Option(None, help="Token service URL (default: AISLE_AUTH_URL)."),
) -> None:
    """Make an assertion, trade it at {AISLE_AUTH_URL}/token, print the access token."""
    import httpx

    from aisle.core.auth.assertion import JWT_BEARER, load_private_key, make_assertion
    from aisle.core.config import load_settings

    base = (auth_url or load_settings().auth_url).rstrip("/")
    try:
        key = load_private_key(key_file.read_bytes())
    except (OSError, AisleError) as exc:
        fail(f"cannot read {key_file}: {exc}")
        return
    form = {"grant_type": JWT_BEARER, "assertion": make_assertion(client_id, key, f"{base}/token")}
    if scope:
        form["scope"] = scope
    try:
        response = httpx.post(f"{base}/token", data=form, timeout=10.0)
    except httpx.HTTPError as exc:
        fail(f"token service at {base} unreachable: {exc}")
        return
    body = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
    if response.status_code != 200:
        fail(f"{response.status_code} {body.get('error')}: {body.get('error_description')}")
    typer.echo(body["access_token"])


@auth_app.command("demo-client")
def demo_client(
    key_file: Path = typer.Option(Path("var/auth/demo-client.pem"), help="Where the demo private key lives."),
) -> None:
    """Idempotent: register client 'demo' for every demo tenant and scope; print a token and a curl line.

    The token is issued in-process through the same grant as ``POST /token`` (so it works before the
    services start); it is valid for 15 minutes, ``aisle auth token`` gets a fresh one.
    """
    from aisle.core.auth.assertion import JWT_BEARER, load_private_key, make_assertion
    from aisle.core.auth.clients import ClientRecord, ClientRegistry, generate_client_key, public_jwk
    from aisle.core.auth.grant import JwtBearerGrant
    from aisle.core.auth.keys import SigningKeys
    from aisle.core.auth.replay_memory import MemoryJtiStore
    from aisle.core.auth.scopes import SCOPES
    from aisle.core.tenancy import Tenants

    settings, store = _context()
    registry = ClientRegistry(store, ttl=0)
    existing = registry.get(DEMO_CLIENT_ID)
    tenants = set(Tenants(store, ttl=0).names() or DEMO_TENANTS)
    try:
        key = load_private_key(key_file.read_bytes()) if key_file.exists() else None
    except AisleError:
        key = None  # unreadable: make a new one
    if key is None or existing is None or existing.jwk != public_jwk(key):
        key = generate_client_key("ES256")
        _write_private(key_file, key.as_pem(private=True))
    else:
        tenants |= set(existing.tenants)
    record = ClientRecord(
        client_id=DEMO_CLIENT_ID, tenants=sorted(tenants), scopes=list(SCOPES), jwk=public_jwk(key)
    )
    same = {"created_at"}
    if existing is None or existing.model_dump(exclude=same) != record.model_dump(exclude=same):
        registry.put(record)
    base = settings.auth_url.rstrip("/")
    grant = JwtBearerGrant(registry, SigningKeys(store), MemoryJtiStore(), issuer=base)
    issued = grant.exchange(JWT_BEARER, make_assertion(DEMO_CLIENT_ID, key, f"{base}/token"))
    tenant = "fashion" if "fashion" in record.tenants else record.tenants[0]
    search = f"http://{settings.host}:{settings.search_port}/search"
    body = shlex.quote(f'{{"query": "red shirt", "tenant": "{tenant}", "size": 3}}')
    typer.echo(f"demo client '{DEMO_CLIENT_ID}' (tenants {','.join(record.tenants)}; key {key_file})")
    typer.echo(f"export AISLE_TOKEN={issued.access_token}")
    headers = '-H "Authorization: Bearer $AISLE_TOKEN" -H "Content-Type: application/json"'
    typer.echo(f"curl -s {headers} -d {body} {search}")
    typer.echo(f"new token: aisle auth token --client-id {DEMO_CLIENT_ID} --key-file {key_file}")


def register(app: typer.Typer) -> None:
    """Add the ``auth`` command group."""
    app.add_typer(auth_app, name="auth")
