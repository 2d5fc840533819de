"""The one error the studio's database raises."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The database could not be opened, read or written; the message is one line saying which and why."""
