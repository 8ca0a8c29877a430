"""Traffic for a service whose store goes down: four clients matching and one writing rules, every answer recorded.

``tests/service/test_outage.py`` asserts on it and ``benchmarks/service_outage.py`` measures with it: one load
generator for both, so that what the test checks is what the benchmark times.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = ["Answer", "OutageLoad"]


@dataclass(frozen=True)
class Answer:
    """One request and its answer."""

    sent: float
    """``time.monotonic()`` when it was sent."""
    took: float
    """Seconds until the answer came."""
    status: int
    headers: httpx.Headers
    rule_id: str = ""
    """The rule a write put (empty for a match)."""
    detail: str = ""
    """What a refused write's problem body said."""

    @property
    def answered(self) -> float:
        """``time.monotonic()`` when the answer came."""
        return self.sent + self.took

    @property
    def stale(self) -> bool:
        """Answered from memory while the store was unreachable (``Norma-Stale-Since``)."""
        return "norma-stale-since" in self.headers

    @property
    def retry_after(self) -> bool:
        return "retry-after" in self.headers


class OutageLoad:
    """``matchers`` clients posting ``message`` to ``/v1/tenants/{tenant}/match`` and one client putting rules
    ``w-00001``, ``w-00002``... (each with one example), pausing ``match_pause`` / ``write_pause`` seconds between
    requests (0: as fast as the service answers). A context manager: the clients run inside the ``with``."""

    def __init__(
        self,
        base: str,
        auth: dict[str, str],
        message: dict[str, Any],
        *,
        tenant: str = "shop",
        matchers: int = 4,
        match_pause: float = 0.0,
        write_pause: float = 0.0,
        timeout: float = 60.0,
    ) -> None:
        self.base, self.auth, self.message, self.tenant, self.timeout = base, auth, message, tenant, timeout
        self.match_pause, self.write_pause = match_pause, write_pause
        self.matches: list[Answer] = []
        self.writes: list[Answer] = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._match) for _ in range(matchers)]
        self.threads.append(threading.Thread(target=self._write))

    def _match(self) -> None:
        with httpx.Client(timeout=self.timeout) as http:
            while not self.stop.is_set():
                sent = time.monotonic()
                r = http.post(f"{self.base}/v1/tenants/{self.tenant}/match", json=self.message, headers=self.auth)
                self.matches.append(Answer(sent, time.monotonic() - sent, r.status_code, r.headers))
                time.sleep(self.match_pause)

    def _write(self) -> None:
        with httpx.Client(timeout=self.timeout) as http:
            n = 0
            while not self.stop.is_set():
                n += 1
                rule_id = f"w-{n:05d}"
                body = {"condition_text": f"customer mentions order number {n}", "examples": [f"order {n}"]}
                sent = time.monotonic()
                r = http.put(f"{self.base}/v1/tenants/{self.tenant}/rules/{rule_id}", json=body, headers=self.auth)
                detail = "" if r.status_code == 200 else str(r.json().get("detail", ""))
                self.writes.append(Answer(sent, time.monotonic() - sent, r.status_code, r.headers, rule_id, detail))
                time.sleep(self.write_pause)

    def __enter__(self) -> OutageLoad:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=self.timeout + 5)
