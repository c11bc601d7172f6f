"""The error-code catalogue: every code in ``src`` comes from it, and the services answer with its status.

The source is read with ``ast``: an inline string where a code is named (``code="..."``, a class's
``code = "..."``, a ``{"code": "..."}`` display, ``OAuthError("...")``) bypasses the catalogue.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel

from aisle.core.error_codes import markdown_table
from aisle.core.errors import HTTP_STATUS_CODES, AisleError, BadRequest, ErrorCode, NotFound
from aisle.services.common.errors import install_error_handlers

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


def _strings(expr: ast.expr) -> Iterator[ast.Constant]:
    """String literals that can become the code: not a dict key looked up (``err.get("code", ...)``)."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        yield expr
    elif isinstance(expr, ast.Call):
        is_get = isinstance(expr.func, ast.Attribute) and expr.func.attr == "get"
        for arg in expr.args[1:] if is_get else expr.args:
            yield from _strings(arg)
    elif isinstance(expr, ast.IfExp):
        yield from _strings(expr.body)
        yield from _strings(expr.orelse)
    elif isinstance(expr, ast.BoolOp):
        for value in expr.values:
            yield from _strings(value)


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _code_sites(tree: ast.AST) -> Iterator[tuple[ast.expr, ast.expr | None]]:
    """(code expression, status expression or None) of every place that names an error code."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            kw = {k.arg: k.value for k in node.keywords}
            if "code" in kw:
                yield kw["code"], kw.get("status")
            if _name(node.func) == "OAuthError" and node.args:
                yield node.args[0], node.args[2] if len(node.args) > 2 else kw.get("status")
        elif isinstance(node, ast.ClassDef):
            attrs: dict[str, ast.expr] = {}
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    target, value = stmt.targets[0], stmt.value
                elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                    target, value = stmt.target, stmt.value
                else:
                    continue
                if isinstance(target, ast.Name):
                    attrs[target.id] = value
            if "code" in attrs:
                yield attrs["code"], attrs.get("status")
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "code":
                    yield value, None


def _sources() -> Iterator[tuple[str, ast.AST]]:
    for path in sorted((SRC / "aisle").rglob("*.py")):
        yield str(path.relative_to(ROOT)), ast.parse(path.read_text(), str(path))


def _inline_codes() -> list[tuple[str, int, str]]:
    found = []
    for where, tree in _sources():
        for code, _ in _code_sites(tree):
            found += [(where, s.lineno, s.value) for s in _strings(code)]
    return sorted(found)


def _catalogued(code: ast.expr) -> ErrorCode | None:
    if isinstance(code, ast.Constant) and isinstance(code.value, str):
        return ErrorCode.lookup(code.value)
    if isinstance(code, ast.Attribute) and isinstance(code.value, ast.Name) and code.value.id == "ErrorCode":
        return ErrorCode[code.attr]
    return None


def test_no_inline_error_code_strings_in_src() -> None:
    """Codes are named by ``ErrorCode`` members, so the catalogue is the one list of them."""
    inline = _inline_codes()
    by_file: dict[str, int] = {}
    for where, _, _ in inline:
        by_file[where] = by_file.get(where, 0) + 1
    assert not inline, (
        f"{len(inline)} inline error codes in {len(by_file)} files (use ErrorCode.<NAME>):\n"
        + "\n".join(f"  {where}:{line} {code!r}" for where, line, code in inline)
    )


def test_every_code_string_in_src_is_catalogued() -> None:
    """A string code outside the catalogue would fall back to its class's status: none may exist."""
    unknown = [f"{w}:{line} {code!r}" for w, line, code in _inline_codes() if ErrorCode.lookup(code) is None]
    assert not unknown, "codes not in aisle/core/error_codes.py:\n" + "\n".join(unknown)


def test_literal_statuses_agree_with_the_catalogue() -> None:
    """A status written next to a catalogued code (``status=413``, a class's ``status = 400``) is its own."""
    wrong = []
    for where, tree in _sources():
        for code, status in _code_sites(tree):
            known = _catalogued(code)
            if known is not None and isinstance(status, ast.Constant) and status.value != known.status:
                wrong.append(f"{where}:{status.lineno} {known} is {known.status}, not {status.value}")
    assert not wrong, "\n".join(wrong)


def test_the_walker_finds_every_form_of_inline_code() -> None:
    tree = ast.parse(
        "class E(NotFound):\n    code = 'a_code'\n"
        "raise BadRequest('m', code='b_code')\n"
        "x = {'code': 'c_code', 'message': 'm'}\n"
        "raise AisleError('m', code=err.get('code', 'd_code'))\n"
        "raise OAuthError('e_code', 'm')\n"
        "raise BadRequest('m', code=ErrorCode.BAD_REQUEST)\n"
    )
    assert sorted(s.value for code, _ in _code_sites(tree) for s in _strings(code)) == [
        "a_code",
        "b_code",
        "c_code",
        "d_code",
        "e_code",
    ]


def test_catalogue_codes_are_unique_snake_case_with_error_statuses() -> None:
    members = list(ErrorCode)
    assert len(ErrorCode.__members__) == len(members), "two names share a code (an Enum alias)"
    assert len({m.value for m in members}) == len(members)
    for member in members:
        assert SNAKE.match(member), member
        assert member.name == member.upper(), member
        assert 400 <= member.status <= 599, f"{member}: {member.status}"
        assert member.description and "\n" not in member.description and "|" not in member.description
    for status, member in HTTP_STATUS_CODES.items():
        assert member.status == status


def test_docs_table_is_the_catalogue() -> None:
    """``docs/error-codes.md`` lists the catalogue (regenerate with ``markdown_table()`` when it changes)."""
    text = (ROOT / "docs" / "error-codes.md").read_text()
    assert markdown_table() in text


def test_raising_with_a_member_or_its_string_takes_the_catalogue_status() -> None:
    assert NotFound("m", code=ErrorCode.RULE_EXISTS).status == 409
    assert BadRequest("m", code="rule_exists").status == 409
    assert BadRequest("m", code="no_such_code").status == 400  # uncatalogued: the class's, never a 500
    assert NotFound("m", code="no_such_code").status == 404
    assert AisleError("m", code=ErrorCode.VECTOR_INDEX_MISSING, status=502).status == 502  # a relayed error

    class Exists(NotFound):
        code = ErrorCode.RULE_EXISTS

    class Declared(BadRequest):
        code = "image_too_large"
        status = 413

    assert (Exists.status, Exists("m").status, Declared("m").status) == (409, 409, 413)
    assert Exists("m").to_dict() == {"code": "rule_exists", "message": "m"}
    assert type(Exists("m").to_dict()["code"]) is str


class _Body(BaseModel):
    size: int


def _app(envelope: str = "standard") -> FastAPI:
    app = FastAPI()
    install_error_handlers(app, envelope)  # type: ignore[arg-type]

    @app.get("/raise/{code}")
    def raise_code(code: str) -> None:
        raise AisleError(f"raised {code}", code=code, details={"code": code})

    @app.get("/not-found")
    def not_found() -> None:
        raise NotFound("no rule 'x'", code=ErrorCode.RULE_NOT_FOUND)

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("boom")

    @app.post("/body")
    def body(payload: _Body) -> _Body:
        return payload

    return app


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(_app(), raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("member", list(ErrorCode), ids=str)
def test_http_handler_answers_with_the_catalogue_status_and_code(
    client: TestClient, member: ErrorCode
) -> None:
    r = client.get(f"/raise/{member}")
    assert r.status_code == member.status
    assert r.json() == {"error": {"code": member, "message": f"raised {member}", "details": {"code": member}}}


def test_http_envelopes_byte_for_byte(client: TestClient) -> None:
    r = client.get("/not-found")
    assert (r.status_code, r.content) == (
        404,
        b'{"error":{"code":"rule_not_found","message":"no rule \'x\'"}}',
    )
    r = client.get("/raise/no_such_code")  # uncatalogued: AisleError's own status, not a 500
    assert r.status_code == 400 and r.json()["error"]["code"] == "no_such_code"
    r = client.get("/nowhere")
    assert (r.status_code, r.content) == (404, b'{"error":{"code":"not_found","message":"Not Found"}}')
    r = client.post("/not-found")
    assert r.status_code == 405
    assert r.content == b'{"error":{"code":"method_not_allowed","message":"Method Not Allowed"}}'
    r = client.post("/body", json={"size": "x"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "validation_error"
    assert r.json()["error"]["message"].startswith("body.size: ")
    r = client.get("/boom")
    assert (r.status_code, r.content) == (
        500,
        b'{"error":{"code":"internal_error","message":"internal error; see the service log"}}',
    )


def test_predict_envelope_carries_the_same_error() -> None:
    with TestClient(_app("predict")) as c:
        r = c.get("/not-found")
    assert r.status_code == 404
    assert r.content == (
        b'{"success":false,"response_data":[],"error":{"code":"rule_not_found","message":"no rule \'x\'"}}'
    )
