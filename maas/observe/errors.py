"""The one error of the observation layer: its message names the cluster or the file and says how to fix it."""

from __future__ import annotations


class ObservationError(Exception):
    """The cluster (or a snapshot file) could not be read; the message is meant for people, without a traceback."""
