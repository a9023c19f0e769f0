"""Index export past one machine: extraction fanned out over a Dask cluster (the ``cluster``
extra), the rows checked and stored by the driver in the content-keyed cache, the bundle then
written as a local export writes it (see ``docs/cluster.md``).

:mod:`.engine` connects to a scheduler or starts a local cluster, :mod:`.batching` cuts the work,
:mod:`.work` is what a worker runs, :mod:`.driver` plans, sends and stores.
"""

from __future__ import annotations

from .driver import ClusterRun, extract_on_cluster
from .engine import ClusterError, ClusterSpec, DaskEngine, ExtraMissing

__all__ = [
    "ClusterError",
    "ClusterRun",
    "ClusterSpec",
    "DaskEngine",
    "ExtraMissing",
    "extract_on_cluster",
]
