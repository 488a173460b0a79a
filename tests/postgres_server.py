"""A real PostgreSQL server for the tests: Debian's binaries, a temporary data directory, a free localhost port.

``make test`` installs Debian's ``postgresql`` package when it is missing. The
server runs as the ``postgres`` system user when the tests run as root
(PostgreSQL refuses to run as root), trusts local connections, listens on
127.0.0.1 only, and is stopped and deleted at the end of the session.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

__all__ = ["PostgresServer", "postgres_binaries", "running_server"]


def postgres_binaries() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding ``initdb`` and ``pg_ctl`` (None without one)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    return found[-1].parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    """One running server; :meth:`database` makes a fresh, empty database and returns its URL."""

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.as_root = os.geteuid() == 0
        self.directory = Path(tempfile.mkdtemp(prefix="tilelab-postgres-"))
        self.data = self.directory / "data"
        self.port = _free_port()
        self.user = "tilelab"
        if self.as_root:
            shutil.chown(self.directory, "postgres", "postgres")

    def _run(self, *command: str, timeout: float = 60) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_root else []
        subprocess.run([*prefix, *command], check=True, capture_output=True, text=True, timeout=timeout)

    def start(self) -> PostgresServer:
        self._run(str(self.binaries / "initdb"), "-D", str(self.data), "-U", self.user, "--auth=trust", "--no-sync", "-E", "UTF8")
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-l", str(self.directory / "log"), "-o", options, "-w", "start")
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """A new empty database on this server; its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)


@contextlib.contextmanager
def running_server() -> Iterator[PostgresServer]:
    """A started server, stopped and deleted on exit; skips the test without Debian's PostgreSQL binaries."""
    import pytest

    binaries = postgres_binaries()
    if binaries is None:
        pytest.skip("PostgreSQL is not installed (`make postgres` installs Debian's package)")
    server = PostgresServer(binaries).start()
    try:
        yield server
    finally:
        server.stop()
