"""The MCP server's log on stderr: a handler that never blocks the protocol on a client
that does not read stderr (`StderrLog`), and `log_to_stderr` that installs it."""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
import time
from typing import Optional


class StderrLog(logging.Handler):
    """A log handler that never blocks its caller: records go into a bounded queue and a
    daemon thread writes them to a file descriptor (a copy of stderr). When the queue is
    full (nobody reads the pipe) records are dropped and counted, and the count is
    written once the pipe drains. The thread writes with `os.write`, holding no Python
    lock, so even a thread stuck on a full pipe never stalls the interpreter's exit."""

    def __init__(self, fd: int, capacity: int = 256) -> None:
        super().__init__()
        self._fd = fd
        self._queue: queue.Queue[bytes] = queue.Queue(capacity)
        self.dropped = 0
        self._thread = threading.Thread(target=self._drain, name="boost-log", daemon=True)
        self._thread.start()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = (self.format(record) + "\n").encode("utf-8", "backslashreplace")
            self._queue.put_nowait(line)
        except queue.Full:
            self.dropped += 1
        except Exception:  # noqa: BLE001 - logging's contract: a handler reports, never raises
            self.handleError(record)

    def _drain(self) -> None:
        reported = 0
        while True:
            line = self._queue.get()
            try:
                _write_all(self._fd, line)
                if self.dropped > reported and self._queue.empty():
                    gone = self.dropped - reported
                    reported = self.dropped
                    _write_all(
                        self._fd,
                        f"boost mcp: {gone} log lines dropped: nobody read stderr\n".encode(),
                    )
            except OSError:
                return  # stderr is gone: nothing left to tell anyone
            finally:
                self._queue.task_done()

    def flush_for(self, seconds: float) -> None:
        """Give the writer up to ``seconds`` to empty the queue (at exit)."""
        deadline = time.monotonic() + seconds
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def log_to_stderr(level: int = logging.WARNING) -> Optional[StderrLog]:
    """Send the root logger (and Python's warnings) to stderr through a `StderrLog`, so
    the protocol never waits on a client that does not read stderr. None when stderr
    has no file descriptor (then the standard handler is used)."""
    try:
        fd = os.dup(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):
        logging.basicConfig(stream=sys.stderr, level=level, format=LOG_FORMAT)
        return None
    handler = StderrLog(fd)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)
    return handler


LOG_FORMAT = "boost mcp: %(levelname)s %(message)s"
