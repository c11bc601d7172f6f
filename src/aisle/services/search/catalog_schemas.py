"""Request and response bodies of the product API (``/products``, ``/catalog/import``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from aisle.catalog.ordering import OpResult
from aisle.catalog.products import format_time
from aisle.catalog.writer import ImportOutcome, ProductRecord, WriteOutcome

PRODUCT_DOC = (
    "The product's fields by attribute name (the tenant's attribute_configuration.json), as GET /item "
    "answers them; a name the configuration lacks is ignored (listed in ignoredFields). Optional "
    "`updateTime` (RFC 3339 with an offset): the write's time; a write older than the stored one is "
    "stale. Optional `id`: must be the path's."
)
PRODUCT_EXAMPLE = {
    "title": "Trail Running Shoe",
    "brand": "Nike",
    "price": 89.99,
    "updateTime": "2026-11-28T09:00:00Z",
}
PRODUCT_SCHEMA = {"type": "object", "additionalProperties": True, "description": PRODUCT_DOC}
Status = Literal["applied", "stale", "failed"]


class OperationError(BaseModel):
    """Why an operation failed: a catalogued code, a message, and the field at fault when one is."""

    code: str
    message: str
    field: str | None = None


class OperationResult(BaseModel):
    """What became of one operation."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    op: str = Field(description="upsert, patch or delete.")
    status: Status = Field(
        description="applied; stale (ignored: the stored write is newer); failed (error says why)."
    )
    error: OperationError | None = None
    stale_fields: list[str] = Field(
        default_factory=list, alias="staleFields", description="A patch's fields left out as stale."
    )
    ignored_fields: list[str] = Field(
        default_factory=list, alias="ignoredFields", description="Names the configuration does not have."
    )

    @classmethod
    def of(cls, result: OpResult) -> OperationResult:
        error = None
        if result.error is not None:
            details = result.error.details if isinstance(result.error.details, dict) else {}
            error = OperationError(
                code=str(result.error.code), message=result.error.message, field=details.get("field")
            )
        return cls(
            id=result.id,
            op=result.op,
            status=result.status,
            error=error,
            staleFields=result.stale_fields,
            ignoredFields=result.ignored_fields,
        )


class WriteAnswer(OperationResult):
    """One product write: its result and the tenant's catalog sequence after it."""

    sequence: int = Field(
        description="The tenant's catalog sequence (its change log's head) after the write."
    )

    @classmethod
    def of_outcome(cls, outcome: WriteOutcome) -> WriteAnswer:
        return cls(**OperationResult.of(outcome.results[0]).model_dump(), sequence=outcome.sequence)


class BatchOperation(BaseModel):
    """One operation of a batch. ``product``: the whole product (upsert) or the merge patch (patch)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"op": "patch", "id": "p-1001", "product": {"price": 79.99}}]},
    )

    op: Literal["upsert", "patch", "delete"]
    id: Annotated[
        str, Field(max_length=1024, description="The product id (1-256 characters, no control characters).")
    ]
    product: dict[str, Any] | None = Field(default=None, description=PRODUCT_DOC)
    updateTime: str | None = Field(default=None, max_length=64, description="RFC 3339, with an offset.")


class BatchRequest(BaseModel):
    """Up to 10,000 operations, applied in order as one write (one change-log entry)."""

    model_config = ConfigDict(extra="forbid")

    operations: list[BatchOperation]


class BatchAnswer(BaseModel):
    """One result per operation, in order, the counts, and the tenant's catalog sequence."""

    sequence: int
    applied: int
    stale: int
    failed: int
    results: list[OperationResult]

    @classmethod
    def of(cls, outcome: WriteOutcome) -> BatchAnswer:
        statuses = [r.status for r in outcome.results]
        return cls(
            sequence=outcome.sequence,
            applied=statuses.count("applied"),
            stale=statuses.count("stale"),
            failed=statuses.count("failed"),
            results=[OperationResult.of(r) for r in outcome.results],
        )


class ProductAnswer(BaseModel):
    """A product as stored now (the last catalog version plus the change log)."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    product: dict[str, Any]
    update_time: str = Field(alias="updateTime", description="The last write of the whole product.")
    field_update_times: dict[str, str] = Field(
        alias="fieldUpdateTimes", description="Fields patched since, with their times (RFC 3339)."
    )
    sequence: int = Field(description="The tenant's catalog sequence this answer reflects.")

    @classmethod
    def of(cls, record: ProductRecord) -> ProductAnswer:
        doc = record.times.get("_doc", 0)
        fields = {k: format_time(v) for k, v in record.times.items() if k != "_doc" and v > doc}
        return cls(
            id=record.id,
            product=record.fields,
            updateTime=format_time(doc),
            fieldUpdateTimes=fields,
            sequence=record.sequence,
        )


class BadRowOut(BaseModel):
    line: int
    reason: str


class ImportAnswer(BaseModel):
    """An import: products upserted, stale, deleted (``full``), the rows skipped (the first 100)."""

    model_config = ConfigDict(populate_by_name=True)

    applied: int
    stale: int
    deleted: int
    bad_row_count: int = Field(alias="badRowCount")
    bad_rows: list[BadRowOut] = Field(alias="badRows")
    sequence: int

    @classmethod
    def of(cls, outcome: ImportOutcome) -> ImportAnswer:
        return cls(
            applied=outcome.applied,
            stale=outcome.stale,
            deleted=outcome.deleted,
            badRowCount=len(outcome.bad_rows),
            badRows=[BadRowOut(line=b.line, reason=b.reason) for b in outcome.bad_rows[:100]],
            sequence=outcome.sequence,
        )
