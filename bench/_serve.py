"""What the benches that start ``excerpt serve`` share: a free loopback port, and waiting until
the server answers ``/-/health``."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, server: subprocess.Popen[bytes], seconds: float = 60) -> None:
    """Returns once ``url``/-/health answers; kills ``server`` and exits the bench when it has
    exited or nothing answered within ``seconds``."""
    until = time.monotonic() + seconds
    while time.monotonic() < until and server.poll() is None:
        try:
            urllib.request.urlopen(f"{url}/-/health", timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("excerpt serve did not start")
