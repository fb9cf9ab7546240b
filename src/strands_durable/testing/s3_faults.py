"""S3 client wrappers that are real clients: each forwards to a boto3 client and counts or faults its requests
(as httpx's MockTransport is a real transport). Tests and bench/bench_s3.py use them to count requests and to
inject the failures S3 produces: 500, 503 SlowDown, timeouts, 412 races, connections reset mid-PUT.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

OPERATIONS = ("get_object", "put_object", "list_objects_v2", "delete_object", "delete_objects", "head_object")


class CountingClient:
    """Counts requests per operation (`counts`, `total`); everything else is the wrapped client's."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    @property
    def meta(self) -> Any:
        return self._client.meta

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def reset(self) -> None:
        with self._lock:
            self.counts.clear()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if name not in OPERATIONS:
            return method

        def counted(**kwargs: Any) -> Any:
            with self._lock:
                self.counts[name] += 1
            return method(**kwargs)

        return counted


def client_error(code: str, status: int, operation: str) -> Exception:
    """The error botocore raises for an HTTP error answer."""
    from botocore.exceptions import ClientError

    answer = {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}
    return ClientError(answer, operation)  # type: ignore[arg-type]


def server_error(operation: str) -> Exception:
    return client_error("InternalError", 500, operation)


def slow_down(operation: str) -> Exception:
    return client_error("SlowDown", 503, operation)


def precondition_failed(operation: str) -> Exception:
    return client_error("PreconditionFailed", 412, operation)


def read_timeout(operation: str) -> Exception:
    from botocore.exceptions import ReadTimeoutError

    return ReadTimeoutError(endpoint_url=f"fault injected in {operation}")


def connection_reset(operation: str) -> Exception:
    from botocore.exceptions import ConnectionClosedError

    return ConnectionClosedError(endpoint_url=f"fault injected in {operation}")


# a fault: (raise this error, and whether the request reaches the server first: a reply lost after the write)
Fault = tuple[Callable[[str], Exception], bool]


class FaultingClient:
    """Fails chosen requests. `plan(operation, fault, *, after=0, times=1, when=None)` arms a fault for the
    `after`-th next matching request (`when(kwargs)` narrows the match); a fault whose second element is True
    lets the request reach the server and then raises (the reply was lost: the outcome is unknown to the caller)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._plans: list[dict[str, Any]] = []
        self.injected: list[str] = []
        self._lock = threading.Lock()

    @property
    def meta(self) -> Any:
        return self._client.meta

    def plan(
        self,
        operation: str,
        fault: Fault,
        *,
        after: int = 0,
        times: int = 1,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        with self._lock:
            self._plans.append({"op": operation, "fault": fault, "skip": after, "times": times, "when": when})

    @property
    def pending(self) -> int:
        return sum(plan["times"] for plan in self._plans)

    def _fault_for(self, operation: str, kwargs: dict[str, Any]) -> Fault | None:
        with self._lock:
            for plan in self._plans:
                if plan["op"] != operation or plan["times"] <= 0 or (plan["when"] and not plan["when"](kwargs)):
                    continue
                if plan["skip"] > 0:
                    plan["skip"] -= 1
                    return None
                plan["times"] -= 1
                self.injected.append(f"{operation} {kwargs.get('Key', '')}")
                return plan["fault"]
        return None

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if name not in OPERATIONS:
            return method

        def faulted(**kwargs: Any) -> Any:
            fault = self._fault_for(name, kwargs)
            if fault is None:
                return method(**kwargs)
            make_error, reaches_server = fault
            if reaches_server:
                method(**kwargs)
            raise make_error(name)

        return faulted


SERVER_ERROR: Fault = (server_error, False)
SLOW_DOWN: Fault = (slow_down, False)
TIMEOUT_BEFORE: Fault = (read_timeout, False)
TIMEOUT_AFTER_WRITE: Fault = (read_timeout, True)
RESET_MID_PUT: Fault = (connection_reset, True)
RESET_BEFORE: Fault = (connection_reset, False)
