"""Tenants: names, their storage scope, and validated loading of their five configuration files."""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass

import orjson
from pydantic import BaseModel, ValidationError

from aisle.core.errors import BadRequest, ConfigInvalid, ErrorCode, TenantNotFound
from aisle.core.storage import BlobNotFound, BlobStore, PrefixBlobStore
from aisle.core.storage.signature import read_object
from aisle.core.tenant_config import (
    CONFIG_FILES,
    AttributeConfiguration,
    AutocompleteConfiguration,
    CrsConfig,
    GlobalConfiguration,
    UserGroupConfiguration,
)

TENANT_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
MARKER_FILE = "attribute_configuration.json"


def check_tenant_name(tenant: str) -> str:
    """Return ``tenant`` when it is a valid name. Raises :class:`BadRequest` (``tenant_invalid``)."""
    if not TENANT_NAME.match(tenant or ""):
        raise BadRequest(
            f"tenant name '{tenant}' is invalid: use 1-64 lowercase letters, digits, '-' or '_'",
            code=ErrorCode.TENANT_INVALID,
        )
    return tenant


@dataclass(frozen=True)
class TenantConfig:
    """The five validated configuration files of one tenant."""

    tenant: str
    attributes: AttributeConfiguration
    autocomplete: AutocompleteConfiguration
    crs: CrsConfig
    global_: GlobalConfiguration
    user_groups: UserGroupConfiguration


def parse_config_file(tenant: str, file: str, raw: bytes) -> BaseModel:
    """Validate one configuration file's bytes.

    Raises:
        ConfigInvalid: bad JSON or a field that does not validate (the first error's field is named).
    """
    model = CONFIG_FILES[file]
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ConfigInvalid(tenant, file, f"not valid JSON ({exc})") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise ConfigInvalid(tenant, file, err["msg"], field=field) from exc


def tenant_scope(store: BlobStore, tenant: str) -> PrefixBlobStore:
    """The tenant's own view of object storage (every path below ``<tenant>/``)."""
    return PrefixBlobStore(store, check_tenant_name(tenant))


class Tenants:
    """Finds tenants in object storage and loads their configuration, cached for ``ttl`` seconds.

    A configuration change in storage is picked up at most ``ttl`` seconds later. Past ``ttl`` the five
    files are read again (plain file reads on a local store:
    :func:`~aisle.core.storage.signature.read_object`) and, when their bytes are unchanged, the same
    :class:`TenantConfig` object is kept: nothing is validated again, and caches keyed on its identity
    (the index registry's check, experiment arms) stay valid.
    """

    def __init__(self, store: BlobStore, ttl: float = 2.0) -> None:
        self.store = store
        self.ttl = ttl
        self._cache: dict[str, tuple[float, TenantConfig]] = {}
        self._raw: dict[str, tuple[bytes | None, ...]] = {}  # the files' bytes behind each cached config
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        """Tenant names in storage: top-level folders holding ``attribute_configuration.json``."""
        return [
            d
            for d in self.store.list_dirs("")
            if TENANT_NAME.match(d) and self.store.exists(f"{d}/{MARKER_FILE}")
        ]

    def exists(self, tenant: str) -> bool:
        return bool(TENANT_NAME.match(tenant or "")) and self.store.exists(f"{tenant}/{MARKER_FILE}")

    def scope(self, tenant: str) -> PrefixBlobStore:
        return tenant_scope(self.store, tenant)

    def known(self, tenant: str) -> bool:
        """Whether this process has loaded the tenant's configuration (no I/O; a bounded set of names)."""
        return tenant in self._cache

    def entry_count(self) -> int:
        """Configurations held in the cache."""
        return len(self._cache)

    def query_encoder(self, tenant: str) -> str:
        """How the tenant's hybrid search embeds a query (``static`` or ``minilm``; its configuration)."""
        return self.config(tenant).global_.hybrid.query_encoder

    def config(self, tenant: str) -> TenantConfig:
        """Load and validate the tenant's five files.

        Raises:
            TenantNotFound: no such tenant in storage.
            ConfigInvalid: a file is missing or invalid (tenant, file and field named).
        """
        now = time.monotonic()
        hit = self._cache.get(tenant)
        if hit is not None and now - hit[0] < self.ttl:
            return hit[1]
        if not TENANT_NAME.match(tenant or ""):
            raise TenantNotFound(tenant)
        scope = self.scope(tenant)
        raws: list[bytes | None] = []
        for file in CONFIG_FILES:
            try:
                raws.append(read_object(scope, file))
            except BlobNotFound as exc:
                if file == MARKER_FILE:
                    raise TenantNotFound(tenant) from exc
                raws.append(None)  # reported below, in file order, as before
        if hit is not None and self._raw.get(tenant) == tuple(raws):
            with self._lock:
                self._cache[tenant] = (now, hit[1])
            return hit[1]
        parsed: dict[str, BaseModel] = {}
        for file, raw in zip(CONFIG_FILES, raws, strict=True):
            if raw is None:
                raise ConfigInvalid(tenant, file, "required file is missing")
            parsed[file] = parse_config_file(tenant, file, raw)
        config = TenantConfig(
            tenant=tenant,
            attributes=parsed["attribute_configuration.json"],  # type: ignore[arg-type]
            autocomplete=parsed["autocomplete_configuration.json"],  # type: ignore[arg-type]
            crs=parsed["crs_config.json"],  # type: ignore[arg-type]
            global_=parsed["global_configuration.json"],  # type: ignore[arg-type]
            user_groups=parsed["user_group_configuration.json"],  # type: ignore[arg-type]
        )
        with self._lock:
            self._cache[tenant] = (now, config)
            self._raw[tenant] = tuple(raws)
        return config

    def write_config(self, tenant: str, files: dict[str, BaseModel]) -> None:
        """Validate and write configuration files (all five when creating a tenant).

        The marker file is written last, so a half-created tenant is never listed.
        """
        scope = self.scope(tenant)
        ordered = sorted(files.items(), key=lambda kv: kv[0] == MARKER_FILE)
        for file, model in ordered:
            if file not in CONFIG_FILES:
                raise BadRequest(
                    f"'{file}' is not a tenant configuration file", code=ErrorCode.CONFIG_FILE_UNKNOWN
                )
            raw = model.model_dump_json(indent=2, by_alias=True, exclude_none=True).encode()
            parse_config_file(tenant, file, raw)
            scope.put(file, raw)
        with self._lock:
            self._cache.pop(tenant, None)
            self._raw.pop(tenant, None)


def child_tenants(storage_url: str | None, nice: int) -> Tenants:
    """The tenants a child process of a serving process works on: its CPU priority lowered by ``nice``
    first (here, in the child: a ``preexec_fn`` is unsafe in a parent with threads), then the bucket of
    the settings it inherited, ``storage_url`` naming another when given; no configuration cache."""
    from aisle.core.config import load_settings
    from aisle.core.storage.resolver import open_blob_store_from_settings

    os.nice(nice)
    settings = load_settings()
    if storage_url:
        settings = settings.model_copy(update={"storage_url": storage_url})
    return Tenants(open_blob_store_from_settings(settings), ttl=0)
