"""``dealroom serve --processes N``'s supervisor: uvicorn's, with a listening socket per child.

uvicorn's ``Multiprocess`` gives every child the one listening socket it bound. Each child's
loop wakes on a new connection and the first to run accepts every connection waiting, so a
burst of connections lands on one child: one core then serves everything while the others
idle (measured: docs/BENCHMARKS.md, "A listening socket per process").

Here each child gets a socket of its own, all bound to the one port with ``SO_REUSEPORT``:
the kernel spreads connections over the listening sockets by each connection's addresses, so
each child takes its share whatever the timing. The supervisor keeps every socket open, so a
child that dies and is started again listens on the same socket (connections that arrive
meanwhile wait in its backlog). Changing the number of children while serving (SIGTTIN,
SIGTTOU) is refused: a child's socket would have to be bound or closed with it.
"""

from __future__ import annotations

import logging
import socket

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.supervisors.multiprocess import Multiprocess, Process

log = logging.getLogger("uvicorn.error")

READY_SECONDS = 120.0
"""How long a rolling restart (SIGHUP) waits for a replacement child to serve before it gives
up and keeps the old one. uvicorn waits only its health-check timeout (5 s), which a child
loading the app on a busy machine can overrun, abandoning the restart after the first child."""


def listening_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` sockets bound to ``host:port`` with ``SO_REUSEPORT`` (not yet listening:
    each child's server listens on its own). Port 0 takes a free port for the first and binds
    the rest to the same."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
            port = sock.getsockname()[1]
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class SocketPerChild(Multiprocess):
    """uvicorn's supervisor, each child on its own socket of ``listeners``."""

    def __init__(self, config: Config, listeners: list[socket.socket]) -> None:
        super().__init__(config, sockets=listeners)
        self.processes_num = len(listeners)

    def _start(self, slot: int) -> Process:
        process = Process(self.config, [self.sockets[slot]])
        process.start()
        return process

    def init_processes(self) -> None:
        self.processes = [self._start(slot) for slot in range(self.processes_num)]

    def keep_subprocess_alive(self) -> None:
        """uvicorn's (0.55), starting a dead child again on its own socket."""
        if self.should_exit.is_set():
            return
        for slot, process in enumerate(self.processes):
            if process.is_alive(timeout=self.config.timeout_worker_healthcheck):
                continue
            process.kill()  # hung, or already gone
            process.join()
            if process.exitcode == STARTUP_FAILURE:
                # it failed before serving (the app or the socket): every restart would too
                log.error("Child process [%s] failed to start, stopping.", process.pid)
                self.should_exit.set()
                return
            if self.should_exit.is_set():
                return
            log.info("Child process [%s] died", process.pid)
            self.processes[slot] = self._start(slot)

    def restart_all(self) -> None:
        """SIGHUP: uvicorn's rolling restart, each replacement on its predecessor's socket,
        given :data:`READY_SECONDS` to start serving."""
        for slot, old in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            new = self._start(slot)
            if not new.wait_until_ready(READY_SECONDS, self.should_exit):
                new.kill()
                new.join()
                if not self.should_exit.is_set():
                    log.error("Child process [%s] was not ready in time; restart aborted.", new.pid)
                return
            old.terminate()
            old.join()
            self.processes[slot] = new

    def handle_ttin(self) -> None:
        log.info("Received SIGTTIN: the number of processes is fixed (a socket each).")

    def handle_ttou(self) -> None:
        log.info("Received SIGTTOU: the number of processes is fixed (a socket each).")
