"""Reading the secrets ``crs_config.json`` refers to (never holds): an environment variable or a file."""

from __future__ import annotations

import os
from pathlib import Path

from aisle.core.crs_config import SecretRef
from aisle.search.external.errors import ExternalSearchAuthFailed


def read_secret(ref: SecretRef) -> str:
    """The secret ``ref`` names: the environment variable's value, or the file's content stripped.

    Raises:
        ExternalSearchAuthFailed (502): the variable is unset or empty, the file unreadable or empty
            (the message names the variable or path, never a value).
    """
    if ref.env is not None:
        value = os.environ.get(ref.env, "").strip()
        if not value:
            raise ExternalSearchAuthFailed(f"environment variable {ref.env} (crs_config.json) is not set")
        return value
    assert ref.file is not None
    try:
        value = Path(ref.file).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ExternalSearchAuthFailed(
            f"secret file {ref.file} (crs_config.json) cannot be read: {exc.__class__.__name__}"
        ) from exc
    if not value:
        raise ExternalSearchAuthFailed(f"secret file {ref.file} (crs_config.json) is empty")
    return value
