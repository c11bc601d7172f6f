"""A cheap "has this local object changed?" check for caches over a local bucket."""

from __future__ import annotations

import os


def file_signature(local: str | None) -> object:
    """``(inode, size, mtime_ns)`` of the file at ``local``, or None when there is no local file (a remote
    store, or the object is absent). A replace by rename changes the inode, so a cache that held the old
    signature knows to read again; a signature seen unchanged lets it skip the read (one ``stat``)."""
    if local is None:
        return None
    try:
        st = os.stat(local)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)
