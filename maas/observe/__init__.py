"""Observation: an immutable snapshot of the live objects the plan reads, taken read-only from the cluster or a file.

No Pulumi import anywhere in this package: the plan is a pure function of (configuration, snapshot), and the same
snapshot can come from `pulumi preview`/`up` at program start or from `python -m maas observe` offline.
"""

from .errors import ObservationError
from .reader import read_cluster
from .scope import ObservationRequest, what_to_observe
from .snapshot import KINDS, Cluster, Kind, Lookup, NotObservedError, ObjectRef, Observed, Scope
from .snapshot_file import dump_snapshot, load_snapshot, parse_snapshot

__all__ = [
    "KINDS",
    "Cluster",
    "Kind",
    "Lookup",
    "NotObservedError",
    "ObjectRef",
    "ObservationError",
    "ObservationRequest",
    "Observed",
    "Scope",
    "dump_snapshot",
    "load_snapshot",
    "parse_snapshot",
    "read_cluster",
    "what_to_observe",
]
