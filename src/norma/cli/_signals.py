"""SIGINT and SIGTERM during a batch: stop the work, keep what finished.

While a :class:`StopSignals` block runs (in the main thread), SIGINT (Ctrl-C) and SIGTERM (``kill``, a CI runner or a
container being stopped) both raise :class:`KeyboardInterrupt` where the batch is, so one ``except`` stops it
whichever came; :attr:`StopSignals.received` says which. Inside a :meth:`~StopSignals.held` block (writing a
finished record) a signal is only recorded, and raised when the block ends: a record is never half written by an
interrupt. After :meth:`~StopSignals.stop` (the batch has stopped and writes what it has) signals are only
recorded. A signal the command was started with ignored (``nohup``, a background job of a shell without job
control) stays ignored.

Outside such a block SIGINT is Python's (``KeyboardInterrupt``: ``norma: interrupted``, exit 130) and SIGTERM ends
the process as it always does (a shell reports 143).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType, TracebackType
from typing import Any

from norma.cli._app import EXIT_INTERRUPTED, EXIT_TERMINATED

__all__ = ["EXIT_SIGNALLED", "StopSignals", "signal_name"]

EXIT_SIGNALLED = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_TERMINATED}
"""128 + the signal's number, as shells report a command a signal stopped."""


def signal_name(signum: int) -> str:
    """``SIGINT``, ``SIGTERM``."""
    return signal.Signals(signum).name


class StopSignals:
    """SIGINT and SIGTERM turned into :class:`KeyboardInterrupt` while the ``with`` block runs (see the module)."""

    def __init__(self) -> None:
        self.received: int | None = None
        """The first of SIGINT and SIGTERM that arrived (None: neither)."""
        self._previous: dict[int, Any] = {}
        self._held = 0
        self._pending = False
        self._stopped = False

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
            return self
        for signum in EXIT_SIGNALLED:
            if signal.getsignal(signum) == signal.SIG_IGN:
                continue
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
        if self._held or self._stopped:
            self._pending = not self._stopped
            return
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """A signal arriving inside the block is raised when the block ends (unless :meth:`stop` was called)."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
        if not self._held and self._pending and not self._stopped:
            self._pending = False
            raise KeyboardInterrupt

    def stop(self) -> None:
        """From now on signals are only recorded: the batch has stopped (or finished) and writes what it has."""
        self._stopped = True
        self._pending = False

    @property
    def exit_code(self) -> int:
        """130 after SIGINT, 143 after SIGTERM."""
        assert self.received is not None
        return EXIT_SIGNALLED[signal.Signals(self.received)]
