"""Reaching a Dask cluster for a sweep, and the one device model its benchmark workers must share."""

from __future__ import annotations

from typing import Any

from tilelab._extras import require

__all__ = ["ClusterError", "connect", "one_device", "workers_of"]

_CONNECT_S = 10.0


class ClusterError(ValueError):
    """The cluster cannot run this sweep (unreachable, no suitable worker, mixed devices); one line says why."""


def connect(cluster: Any) -> tuple[Any, bool]:
    """A ``distributed.Client`` for ``cluster`` and whether this call created it (and must close it)."""
    distributed = require("distributed", "tune(cluster=...)")
    if isinstance(cluster, distributed.Client):
        return cluster, False
    if not isinstance(cluster, str) and not hasattr(cluster, "scheduler_address"):
        raise ClusterError(f"cluster={cluster!r}: expected a distributed.Client, a scheduler address or a Dask cluster")
    if isinstance(cluster, str):
        _check_address(distributed, cluster)
    try:
        return distributed.Client(cluster, timeout=_CONNECT_S, set_as_default=False), True
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {cluster} ({exc})") from None


def workers_of(client: Any) -> dict[str, dict]:
    """Every worker of ``client``'s cluster (address → its identity), asked of the scheduler now.

    Not ``client.scheduler_info(n_workers=-1)``: that returns the client's cached identity,
    which its periodic refresh (which asks for no workers) can overwrite between the fetch
    and the return, so it sometimes reads an empty cluster.
    """
    return dict(client.sync(client.scheduler.identity, n_workers=-1)["workers"])


def _check_address(distributed: Any, address: str) -> None:
    """Refuse an address Dask cannot parse before a Client exists: a Client that fails while
    parsing it is left half made, and its finalizer stalls the interpreter's exit for 20 s."""
    try:
        scheme, _ = distributed.comm.parse_address(address)
        if scheme in ("tcp", "tls", "ws", "wss"):
            distributed.comm.get_address_host_port(address)
    except ValueError as exc:
        raise ClusterError(
            f"cluster={address!r} is not a Dask scheduler address ({exc}); "
            "expected e.g. 'tcp://host:8786', a distributed.Client or a Dask cluster object"
        ) from None


def one_device(resource: str, devices: dict[str, str]) -> str:
    """The one device model that the benchmark workers (address → device name) share.

    Raises
    ------
    ClusterError
        When they name more than one: a sweep compares latencies of one device model only.
    """
    models = {device: address for address, device in devices.items()}
    if len(models) > 1:
        found = ", ".join(f"{device} ({address})" for device, address in models.items())
        raise ClusterError(
            f"the cluster's {resource} workers have different devices: {found}; one sweep compares one device"
            " model only: give the others another scheduler or resource name"
        )
    return next(iter(models))
