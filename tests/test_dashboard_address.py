"""The README's dashboard command listens on loopback only: it runs candidate code and imports files by path,
so serving other machines is a choice, never the default."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from app.testing import free_port, healthy

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_dashboard_command_listens_on_loopback_only(tmp_path):
    port = free_port()
    env = {**os.environ, "REFINERY_HOME": str(tmp_path / "home")}
    env.pop("REFINERY_DATABASE_URL", None)
    server = subprocess.Popen(["./run.sh", "dashboard", "--server.port", str(port)], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not healthy(f"http://127.0.0.1:{port}"):
            assert server.poll() is None and time.monotonic() < deadline, "the dashboard did not start"
            time.sleep(0.3)
        listening = [c.laddr.ip for c in psutil.Process(server.pid).net_connections(kind="inet")
                     if c.status == psutil.CONN_LISTEN and c.laddr.port == port]
        assert listening and set(listening) <= {"127.0.0.1", "::1"}, listening
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
