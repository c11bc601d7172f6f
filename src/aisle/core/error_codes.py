"""The catalogue of Aisle's error codes: each stable snake_case code with its HTTP status and meaning.

Like meilisearch's ``meilisearch-types/src/error.rs``: one list names every code a client can see, so the
status an error answers with is decided here, once, and never at the raise site. Raise with a member::

    raise NotFound(f"rule '{rule_id}' not found", code=ErrorCode.RULE_NOT_FOUND)   # -> 404

or give an :class:`~aisle.core.errors.AisleError` subclass a ``code = ErrorCode.X`` class attribute. A
member is a ``str`` (``ErrorCode.RULE_NOT_FOUND == "rule_not_found"``), so envelopes and clients see the
same strings as ever. ``docs/error-codes.md`` is generated from this list (:func:`markdown_table`).

The token endpoint's codes (RFC 6749 section 5.2 ``error``) are listed here too; they are rendered in that
RFC's envelope, not Aisle's.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Self


class ErrorCode(StrEnum):
    """An error code (the member's string value), its HTTP ``status`` and a one-line ``description``."""

    status: int
    description: str

    def __new__(cls, code: str, status: int, description: str) -> Self:
        member = str.__new__(cls, code)
        member._value_ = code
        member.status = status
        member.description = description
        return member

    @classmethod
    def lookup(cls, code: str) -> ErrorCode | None:
        """The member named ``code``, or None when the string is not catalogued."""
        member = cls._value2member_map_.get(code)
        return member if isinstance(member, ErrorCode) else None

    # Generic: one per HTTP status, also what framework HTTP errors (unknown path, wrong method) answer with.
    AISLE_ERROR = "aisle_error", 400, "An error without a more specific code."
    BAD_REQUEST = "bad_request", 400, "The request cannot be served as it is."
    UNKNOWN_PARAMETER = "unknown_parameter", 400, "A query parameter the operation does not declare."
    UNAUTHORIZED = "unauthorized", 401, "No bearer token (RFC 6750 section 3.1)."
    FORBIDDEN = "forbidden", 403, "The request is not allowed."
    NOT_FOUND = "not_found", 404, "No such resource (or path)."
    METHOD_NOT_ALLOWED = "method_not_allowed", 405, "The path does not take this HTTP method."
    NOT_ACCEPTABLE = "not_acceptable", 406, "No representation matches the Accept header."
    CONFLICT = "conflict", 409, "The request conflicts with the resource's current state."
    PAYLOAD_TOO_LARGE = "payload_too_large", 413, "The request body is too large."
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type", 415, "The request body's content type is not taken."
    VALIDATION_ERROR = (
        "validation_error",
        422,
        "A parameter or body field breaks the OpenAPI schema; details name it.",
    )
    VALUE_INVALID = (
        "value_invalid",
        400,
        "A schema-valid value refused by a documented rule; details name it.",
    )
    TOO_MANY_REQUESTS = "too_many_requests", 429, "Too many requests; retry later."
    INTERNAL_ERROR = "internal_error", 500, "An unexpected failure; the service log has the traceback."
    HTTP_ERROR = "http_error", 500, "A framework HTTP error of another status; the response keeps its status."
    UNAVAILABLE = "unavailable", 503, "A resource the request needs is unavailable."

    # Tenants, their configuration and the storage behind them.
    TENANT_INVALID = "tenant_invalid", 400, "The tenant name is not 1-64 of a-z, 0-9, '-' and '_'."
    TENANT_NOT_FOUND = "tenant_not_found", 404, "No tenant of that name in storage."
    TENANT_CONFIG_INVALID = "tenant_config_invalid", 503, "A tenant configuration file is missing or invalid."
    CONFIG_FILE_UNKNOWN = "config_file_unknown", 400, "Not one of the tenant configuration files."
    STORAGE_URL_INVALID = "storage_url_invalid", 400, "The storage URL's scheme is not supported."
    BLOB_NOT_FOUND = "blob_not_found", 404, "No object at that path in storage."
    EVENT_STORE_URL_INVALID = "event_store_url_invalid", 400, "The event store URL is not supported."
    EVENT_STORE_UNAVAILABLE = (
        "event_store_unavailable",
        503,
        "The event store (Redis) cannot be reached; send the request again after Retry-After seconds.",
    )
    STORAGE_UNAVAILABLE = (
        "storage_unavailable",
        503,
        "Object storage cannot be reached; retry after Retry-After seconds (a write may have landed: "
        "read it back).",
    )

    # Resource servers' authentication (every service; RFC 6750 section 3 challenge).
    INVALID_TOKEN = "invalid_token", 401, "The token is malformed, forged, expired or for another audience."
    INSUFFICIENT_SCOPE = "insufficient_scope", 403, "The token lacks the endpoint's scope."
    TENANT_FORBIDDEN = "tenant_forbidden", 403, "The token is not valid for the request's tenant."
    AUTH_UNAVAILABLE = "auth_unavailable", 503, "The token service's public keys cannot be read."
    CLIENT_ID_INVALID = "client_id_invalid", 400, "The client id is not 1-64 of a-z, A-Z, 0-9, '.', '_', '-'."
    CLIENT_KEY_INVALID = "client_key_invalid", 400, "The client key is unreadable, unsupported or private."
    SCOPE_UNKNOWN = "scope_unknown", 400, "A scope that does not exist."

    # Token endpoint (RFC 6749 section 5.2 ``error``, in that RFC's envelope).
    INVALID_REQUEST = "invalid_request", 400, "Token request: a parameter is missing, repeated or malformed."
    INVALID_GRANT = "invalid_grant", 400, "Token request: the assertion is invalid (RFC 7523 section 3.1)."
    UNSUPPORTED_GRANT_TYPE = "unsupported_grant_type", 400, "Token request: a grant other than JWT bearer."
    INVALID_SCOPE = "invalid_scope", 400, "Token request: a scope not granted to the client."
    TEMPORARILY_UNAVAILABLE = "temporarily_unavailable", 503, "Token request: the replay store is down."

    # Catalogs.
    CATALOG_NOT_FOUND = "catalog_not_found", 404, "The tenant has no catalog imported."
    CATALOG_EMPTY = "catalog_empty", 400, "The catalog file holds no valid product."
    CATALOG_ID_MISSING = "catalog_id_missing", 400, "The catalog file has no id column."
    CATALOG_FILE_INVALID = "catalog_file_invalid", 400, "The catalog file cannot be parsed."
    CATALOG_FILE_MISSING = "catalog_file_missing", 400, "The catalog file does not exist."
    FORMAT_UNKNOWN = "format_unknown", 400, "Not a catalog format: use jsonl, csv or parquet."
    CATALOG_TITLE_MISSING = (
        "catalog_title_missing",
        400,
        "No column of the catalog file can be the product title (or the title column named is absent).",
    )
    TENANT_EXISTS = "tenant_exists", 409, "A tenant of that name exists already; replace it explicitly."
    PRODUCT_INVALID = (
        "product_invalid",
        422,
        "A product field breaks the tenant's attribute configuration; details.field names it.",
    )
    UPDATE_TIME_INVALID = (
        "update_time_invalid",
        400,
        "A write's updateTime is not RFC 3339 with an offset, is before 1970 or over a day ahead.",
    )
    BATCH_TOO_LARGE = "batch_too_large", 413, "A product batch of more than 10,000 operations."
    CATALOG_COMPACTING = (
        "catalog_compacting",
        409,
        "Another process is folding the tenant's change log into a catalog version; try again shortly.",
    )

    # Search, browse, suggestions and ranking.
    PRODUCT_NOT_FOUND = "product_not_found", 404, "No product of that id in the tenant's catalog."
    CATEGORY_NOT_FOUND = "category_not_found", 404, "No category of that path."
    CATEGORIES_UNAVAILABLE = "categories_unavailable", 400, "The tenant has no facetable category attribute."
    FACET_UNKNOWN = "facet_unknown", 400, "A facet naming no attribute."
    FACET_NOT_ALLOWED = "facet_not_allowed", 400, "A facet on an attribute that is not facetable."
    FILTER_INVALID = "filter_invalid", 400, "A filter parameter that is not field:value or a numeric range."
    FILTER_UNKNOWN = "filter_unknown", 400, "A filter naming no attribute."
    FILTER_NOT_ALLOWED = "filter_not_allowed", 400, "A filter on an attribute not filterable that way."
    FILTER_VALUE_INVALID = "filter_value_invalid", 400, "A filter value of the wrong type for its field."
    FILTER_UNAVAILABLE = "filter_unavailable", 400, "Filters need the tenant's catalog index."
    SORT_UNAVAILABLE = "sort_unavailable", 400, "The catalog has no field to sort that way."
    QUERY_REQUIRED = "query_required", 400, "The request needs a non-empty query."
    PERIOD_INVALID = (
        "period_invalid",
        400,
        "An analytics period that is not ISO-8601, ends before it starts, or spans over 731 days.",
    )
    QUERY_LOG_INVALID = "query_log_invalid", 400, "The query log file cannot be read."
    RANKER_NOT_FOUND = "ranker_not_found", 404, "The tenant has no ranker of that version."
    JUDGMENTS_UNUSABLE = "judgments_unusable", 400, "No judged query has a relevant product in the catalog."
    BEHAVIOUR_UNUSABLE = (
        "behaviour_unusable",
        400,
        "The tenant's log has too few clicked queries to learn from.",
    )
    RECOMMENDATIONS_UNAVAILABLE = "recommendations_unavailable", 503, "The predict service is unreachable."
    SHOP_EVENTS_UNAVAILABLE = (
        "shop_events_unavailable",
        503,
        "The storefront's event relay (POST /shop/events) cannot reach the edit service.",
    )

    # Merchandising rules.
    RULE_NOT_FOUND = "rule_not_found", 404, "No rule of that id."
    RULE_EXISTS = "rule_exists", 409, "A rule of that id exists already."
    RULE_VERSION_CONFLICT = "rule_version_conflict", 409, "The rule is no longer at the version given."
    RULE_INVALID = "rule_invalid", 400, "The rule does not validate against the tenant's configuration."
    RULE_MATCHES_EVERY_QUERY = (
        "rule_matches_every_query",
        400,
        "A rule that fires on every query, saved without appliesToAllQueries: true.",
    )
    RULE_ID_MISMATCH = "rule_id_mismatch", 400, "The body's rule id is not the path's."
    VERSION_MISMATCH = "version_mismatch", 400, "The body's version and If-Match disagree."
    IF_MATCH_INVALID = "if_match_invalid", 400, 'If-Match is not a version such as "3".'

    # Experiments (A/B tests).
    EXPERIMENT_NOT_FOUND = "experiment_not_found", 404, "No experiment of that id."
    EXPERIMENT_VERSION_CONFLICT = (
        "experiment_version_conflict",
        409,
        "The experiment is no longer at the version given.",
    )
    EXPERIMENT_STATE_CONFLICT = (
        "experiment_state_conflict",
        409,
        "The action does not fit the experiment's status (e.g. changing a running experiment).",
    )
    EXPERIMENT_INVALID = (
        "experiment_invalid",
        400,
        "A variant changes something the tenant does not have (an unknown rule, ranker or setting).",
    )
    BASELINE_INVALID = "baseline_invalid", 400, "A sample-size baseline or effect outside (0, 1)."

    # Vectors and image search.
    VECTOR_INDEX_MISSING = "vector_index_missing", 503, "The tenant has no vectors of that kind built."
    VECTORS_BUILDING = (
        "vectors_building",
        503,
        "The tenant's vectors of that kind are being built; Retry-After says when to look again.",
    )
    VECTOR_DIMENSION_MISMATCH = "vector_dimension_mismatch", 400, "A vector of the wrong dimension."
    VECTOR_IDS_REPEATED = "vector_ids_repeated", 400, "The same id twice in one request."
    VECTOR_INVALID = "vector_invalid", 400, "A vector that cannot be indexed (all zeros)."
    VECTOR_QUERY_INVALID = "vector_query_invalid", 400, "A vector query that is not well formed."
    VECTOR_SERVICE_UNAVAILABLE = "vector_service_unavailable", 503, "The vector service is unreachable."
    VECTOR_SERVICE_ERROR = "vector_service_error", 502, "The vector service failed without a code."
    IMAGE_INVALID = "image_invalid", 400, "The upload is not a readable image."
    IMAGE_EMPTY = "image_empty", 400, "The uploaded file is empty."
    IMAGE_TOO_LARGE = "image_too_large", 413, "The uploaded image file is too large."
    IMAGE_TOO_MANY_PIXELS = "image_too_many_pixels", 413, "The image has too many pixels."
    IMAGE_FORMAT = "image_format", 415, "An image format that is not taken."
    IMAGE_SEARCH_UNAVAILABLE = "image_search_unavailable", 503, "The image encoder is not installed."

    # The external retail search service (crs_config.json): proxy service and search fallback.
    EXTERNAL_SEARCH_NOT_CONFIGURED = (
        "external_search_not_configured",
        409,
        "The tenant has no external retail search service enabled in crs_config.json.",
    )
    EXTERNAL_SEARCH_UNSUPPORTED = (
        "external_search_unsupported",
        409,
        "The tenant's external search backend does not offer this operation (e.g. image search).",
    )
    EXTERNAL_SEARCH_REJECTED = (
        "external_search_rejected",
        400,
        "The external search service refused the request as invalid (e.g. a field it does not know).",
    )
    EXTERNAL_SEARCH_UNAVAILABLE = (
        "external_search_unavailable",
        502,
        "The external search service is down, failed, or its circuit breaker is open.",
    )
    EXTERNAL_SEARCH_AUTH_FAILED = (
        "external_search_auth_failed",
        502,
        "The external search service refused Aisle's credentials (its 401 or 403), or none could be read.",
    )
    EXTERNAL_SEARCH_RATE_LIMITED = (
        "external_search_rate_limited",
        503,
        "The external search service is rate-limiting Aisle (its 429); retry later.",
    )
    EXTERNAL_SEARCH_TIMEOUT = (
        "external_search_timeout",
        504,
        "The external search service did not answer within the deadline.",
    )

    # Recommendations: containers, models, jobs, events.
    CONTAINER_NOT_FOUND = "container_not_found", 404, "No container of that id."
    CONTAINER_EXISTS = "container_exists", 409, "A container of that id exists already."
    CONTAINER_ID_MISMATCH = "container_id_mismatch", 400, "A PUT body's containerId is not the path's id."
    CONTAINER_VERSION_CONFLICT = "container_version_conflict", 409, "The container changed since it was read."
    CONDITION_FIELD_UNKNOWN = "condition_field_unknown", 400, "A condition on a field the catalog lacks."
    CONDITION_TOO_DEEP = "condition_too_deep", 400, "A condition nested too deep."
    ACTION_SLOT_UNKNOWN = "action_slot_unknown", 400, "An action naming a slot the container lacks."
    MODEL_NOT_FOUND = "model_not_found", 404, "No model of that id and version."
    MODEL_NOT_DEPLOYED = "model_not_deployed", 409, "The model is not deployed."
    MODEL_TRAINING = (
        "model_training",
        503,
        "The slot's model is being trained in the background; Retry-After says when to look again.",
    )
    MODEL_IN_USE = "model_in_use", 409, "The model is deployed or used by a container."
    MODEL_TYPE_MISMATCH = "model_type_mismatch", 400, "The model is of another type than the request's."
    MODEL_IDS_UNKNOWN = "model_ids_unknown", 400, "modelIds not in the container."
    MODEL_ARTIFACT_MISSING = "model_artifact_missing", 409, "The model's artifact has not been written."
    MODEL_ARTIFACT_EXISTS = "model_artifact_exists", 409, "The artifact file exists already."
    BUNDLE_MODEL_NOT_FOUND = "bundle_model_not_found", 404, "No bundle model for the container."
    JOB_NOT_FOUND = "job_not_found", 404, "No job of that id."
    JOB_KIND_UNKNOWN = "job_kind_unknown", 400, "A job of a kind no handler runs."
    JOB_FAILED = "job_failed", 500, "A job failed unexpectedly (reported in the job, not as a status)."
    EVENT_TYPE_UNKNOWN = "event_type_unknown", 400, "An event type the tenant does not accept."
    EVENT_TIME_INVALID = "event_time_invalid", 400, "An event timestamp before 1970 or over a day ahead."


HTTP_STATUS_CODES: Mapping[int, ErrorCode] = {
    c.status: c
    for c in (
        ErrorCode.BAD_REQUEST,
        ErrorCode.UNAUTHORIZED,
        ErrorCode.FORBIDDEN,
        ErrorCode.NOT_FOUND,
        ErrorCode.METHOD_NOT_ALLOWED,
        ErrorCode.NOT_ACCEPTABLE,
        ErrorCode.CONFLICT,
        ErrorCode.PAYLOAD_TOO_LARGE,
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        ErrorCode.VALIDATION_ERROR,
        ErrorCode.TOO_MANY_REQUESTS,
    )
}
"""The code a bare HTTP status answers with (framework errors); another status is ``http_error``."""


def markdown_table() -> str:
    """The catalogue as the Markdown table of ``docs/error-codes.md``."""
    lines = ["| code | HTTP status | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{c}` | {c.status} | {c.description} |" for c in ErrorCode]
    return "\n".join(lines) + "\n"
