"""A real, private `redis-server` for the tests that share a campaign database.

The project installs Debian's `redis-server` (CI's `.ci/run` does `apt-get install
redis-server`); tests that need one are skipped, saying why, only where the binary is absent.
Each server listens on a free port of 127.0.0.1, keeps nothing on disk, and is killed when
its test (or module) is done.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def require_redis_server() -> None:
    if not Path(REDIS_SERVER).exists():
        pytest.skip("needs redis-server (apt-get install redis-server; CI installs it)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def redis_server(directory: Path) -> Iterator[str]:
    """Start a server, wait until it answers PING, yield its URL (database 0), kill it."""
    import redis

    require_redis_server()
    for _ in range(5):  # a port taken between probing and binding: try another
        port = _free_port()
        process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(directory)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=port, socket_connect_timeout=0.5)
        deadline = time.monotonic() + 10
        try:
            while process.poll() is None and time.monotonic() < deadline:
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.02)
            else:
                continue  # exited (port taken) or never answered: next port
            try:
                yield f"redis://127.0.0.1:{port}/0"
            finally:
                client.close()
            return
        finally:
            process.kill()
            process.wait()
    raise RuntimeError("redis-server did not start on any of 5 free ports")
