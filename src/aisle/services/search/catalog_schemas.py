"""Request and response bodies of the product API (``/products``, ``/catalog/import``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from aisle.catalog.ordering import OpResult
from aisle.catalog.products import format_time
from aisle.catalog.writer import ImportOutcome, ProductRecord, WriteOutcome
from aisle.core.stock import STORE_ID_PATTERN, Availability

PRODUCT_DOC = (
    "The product's fields by attribute name (the tenant's attribute_configuration.json), as GET /item "
    "answers them; a name the configuration lacks is ignored (listed in ignoredFields), except the "
    "standard stock fields, kept for every tenant: `availability` (IN_STOCK, OUT_OF_STOCK, PREORDER or "
    "BACKORDER; 422 product_invalid otherwise) and `inventories` ({storeId: {availability, quantity}}, "
    "merged store by store, each by its own update time; a PUT without it keeps the stored ones). Optional "
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
    op: str = Field(description="upsert, patch, delete or inventory.")
    status: Status = Field(
        description="applied; stale (ignored: the stored write is newer); failed (error says why)."
    )
    error: OperationError | None = None
    stale_fields: list[str] = Field(
        default_factory=list,
        alias="staleFields",
        description="A patch's fields left out as stale; a store's inventory as inventories/<storeId>.",
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


def _counts(outcome: WriteOutcome) -> dict[str, int]:
    """A batch answer's sequence and how many operations were applied, stale and failed."""
    statuses = [r.status for r in outcome.results]
    counts = {status: statuses.count(status) for status in ("applied", "stale", "failed")}
    return {"sequence": outcome.sequence, **counts}


class BatchAnswer(BaseModel):
    """One result per operation, in order, the counts, and the tenant's catalog sequence."""

    sequence: int
    applied: int
    stale: int
    failed: int
    results: list[OperationResult]

    @classmethod
    def of(cls, outcome: WriteOutcome) -> BatchAnswer:
        return cls(**_counts(outcome), results=[OperationResult.of(r) for r in outcome.results])


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


AvailabilityValue = Literal["IN_STOCK", "OUT_OF_STOCK", "PREORDER", "BACKORDER"]
assert set(AvailabilityValue.__args__) == {a.value for a in Availability}  # type: ignore[attr-defined]


class InventoryBody(BaseModel):
    """One store's inventory of a product (``PUT /products/{id}/inventory/{storeId}``)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"availability": "OUT_OF_STOCK", "quantity": 0, "updateTime": "2026-11-28T09:00:00Z"}
            ]
        },
    )

    availability: AvailabilityValue
    quantity: int | None = Field(default=None, ge=0, le=2**53, description="Units the store holds.")
    updateTime: str | None = Field(
        default=None,
        max_length=64,
        description="RFC 3339 with an offset: the write's time; older than the store's stored entry: stale.",
    )


class InventoryOperation(BaseModel):
    """One store inventory of a batch. Its values are checked per operation: a bad one fails alone
    (``product_invalid`` naming the field), so they are loosely typed here."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"id": "p-1001", "storeId": "store-12", "availability": "IN_STOCK", "quantity": 4}]
        },
    )

    id: Annotated[
        str, Field(max_length=1024, description="The product id (1-256 characters, no control characters).")
    ]
    storeId: str = Field(max_length=1024, description=f"The store id: {STORE_ID_PATTERN}.")
    availability: str | None = Field(
        default=None, max_length=64, description="IN_STOCK, OUT_OF_STOCK, PREORDER or BACKORDER (required)."
    )
    quantity: int | None = Field(default=None, description="Units the store holds: a whole number >= 0.")
    updateTime: str | None = Field(default=None, max_length=64, description="RFC 3339, with an offset.")


class InventoryBatchRequest(BaseModel):
    """Up to 10,000 store inventories, applied in order as one write (one change-log entry)."""

    model_config = ConfigDict(extra="forbid")

    operations: list[InventoryOperation]


class InventoryResult(OperationResult):
    """What became of one store inventory of a batch."""

    store_id: str = Field(alias="storeId")


class InventoryBatchAnswer(BaseModel):
    """One result per store inventory, in order, the counts, and the tenant's catalog sequence."""

    sequence: int
    applied: int
    stale: int
    failed: int
    results: list[InventoryResult]

    @classmethod
    def of(cls, outcome: WriteOutcome, store_ids: list[str]) -> InventoryBatchAnswer:
        return cls(
            **_counts(outcome),
            results=[
                InventoryResult(**OperationResult.of(r).model_dump(by_alias=True), storeId=store)
                for r, store in zip(outcome.results, store_ids, strict=True)
            ],
        )


class StoresAnswer(BaseModel):
    """The stores the tenant's products list inventory for (what a storefront's store picker offers)."""

    stores: list[str] = Field(description="Store ids, sorted; empty when no product has store inventory.")
