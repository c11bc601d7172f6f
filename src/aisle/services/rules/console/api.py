"""The console's calls to Aisle's own REST APIs, made with the merchandiser's token.

The rules API is this very process: calls go through :class:`httpx.ASGITransport` to the app (no
network hop, but the same routes, validation and scope checks as an outside client). The edit and
predict and analytics services are reached over HTTP at ``AISLE_EDIT_URL``, ``AISLE_PREDICT_URL`` and
``AISLE_ANALYTICS_URL``. The console
never reads or writes rules or containers behind the APIs' backs, so it can do nothing the token
could not do with curl.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi import FastAPI

from aisle.core.config import Settings
from aisle.core.error_codes import ErrorCode
from aisle.services.rules.console.session import ConsoleSession, SignInRequired
from aisle.services.rules.console.wording import humane

TIMEOUT = 15.0


@dataclass
class ApiReply:
    """One API answer: status, decoded JSON body (None when empty), headers."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def code(self) -> str:
        return str(self._error().get("code", ""))

    @property
    def message(self) -> str:
        """The API's error message (``{"error": {"message"}}``; predict's envelope too)."""
        err = self._error()
        return str(err.get("message") or err.get("detail") or f"HTTP {self.status}")

    @property
    def details(self) -> Any:
        return self._error().get("details")

    def field_errors(self) -> list[tuple[str, str]]:
        """``(field path, message)`` of a validation error, the ``body.`` prefix removed and the message
        as a sentence (:func:`~aisle.services.rules.console.wording.humane`)."""
        details = self.details
        if not isinstance(details, list):
            return []
        out = []
        for d in details:
            if isinstance(d, dict) and "field" in d:
                out.append((str(d["field"]).removeprefix("body."), humane(str(d.get("message", "")))))
        return out

    def _error(self) -> dict[str, Any]:
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), dict):
            return self.body["error"]  # type: ignore[no-any-return]
        return {}


class Api:
    """Calls on behalf of one session (see the module docstring).

    Args:
        app: the rules service's app (in-process target of rules calls).
        settings: ``edit_url`` and ``predict_url``.
        session: whose token the calls carry.
    """

    def __init__(self, app: FastAPI, settings: Settings, session: ConsoleSession) -> None:
        self.app = app
        self.settings = settings
        self.session = session

    async def _call(self, base: str, method: str, path: str, **kwargs: Any) -> ApiReply:
        transport = httpx.ASGITransport(app=self.app) if base == "rules" else None
        url = {
            "rules": "http://rules.internal",
            "edit": self.settings.edit_url,
            "predict": self.settings.predict_url,
            "analytics": self.settings.analytics_url,
        }[base]
        headers = {**self.session.headers(), **kwargs.pop("headers", {})}
        try:
            async with httpx.AsyncClient(base_url=url, transport=transport, timeout=TIMEOUT) as client:
                resp = await client.request(method, path, headers=headers, **kwargs)
        except httpx.HTTPError as exc:
            msg = f"the {base} service at {url} is unreachable ({exc.__class__.__name__})"
            return ApiReply(503, {"error": {"code": str(ErrorCode.UNAVAILABLE), "message": msg}})
        kind = resp.headers.get("content-type", "")
        body = resp.json() if resp.content and "json" in kind else resp.text if "csv" in kind else None
        if resp.status_code == 401:
            raise SignInRequired("your token was refused (expired?): sign in again")
        return ApiReply(resp.status_code, body, dict(resp.headers))

    async def rules(self, method: str, path: str, tenant: str, **kwargs: Any) -> ApiReply:
        params = {**kwargs.pop("params", {}), "tenant": tenant}
        return await self._call("rules", method, path, params=params, **kwargs)

    async def edit(self, method: str, path: str, tenant: str, **kwargs: Any) -> ApiReply:
        params = {**kwargs.pop("params", {}), "tenant": tenant}
        return await self._call("edit", method, path, params=params, **kwargs)

    async def predict(self, tenant: str, body: dict[str, Any]) -> ApiReply:
        return await self._call("predict", "POST", "/predict", params={"tenant": tenant}, json=body)

    async def analytics(self, report: str, tenant: str, **params: Any) -> ApiReply:
        """``GET /analytics/<report>`` of the analytics service (``AISLE_ANALYTICS_URL``)."""
        return await self._call(
            "analytics", "GET", f"/analytics/{report}", params={**params, "tenant": tenant}
        )

    async def all_rules(self, tenant: str) -> ApiReply:
        """Every rule of the tenant (the list API a page of 200 at a time), as one ``rules`` list."""
        rules: list[Any] = []
        offset = 0
        while True:
            reply = await self.rules("GET", "/rules", tenant, params={"offset": offset, "limit": 200})
            if not reply.ok:
                return reply
            rules.extend(reply.body["rules"])
            offset += 200
            if offset >= reply.body["total"]:
                return ApiReply(200, {"rules": rules, "total": len(rules)})
