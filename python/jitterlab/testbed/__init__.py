"""The testbed: a scenario run with real Linux TCP and real sockets in network namespaces
(`run(scenario, seed, out)`, `write(result, out)`; see docs/testbed.md).

Its parts, layered in this order (a part imports only parts listed before it):

- `model`: the plan's types (`Plan`: namespaces, links, queues, flows, addresses, routes);
- `plan`: a scenario turned into a `Plan`, every key checked (no side effects: tested without root);
- `realtime`: how well a run kept real time (its delay line's lateness, CPU pressure);
- `net`: the namespaces, veth links, qdiscs and the userspace link, set up and torn down;
- `worker`: one role (RTP sender or receiver, a TCP workload) inside a namespace, run as
  ``ip netns exec NS python -m jitterlab.testbed.worker ROLE ARGS.json``;
- `driver`: `run` and `write`, which plan, build the network, start the workers and read their
  records, and `accuracy` (a probe of this machine's real-time accuracy).

`run`, `write` and the driver's other names are imported when first used (PEP 562): a worker
(`python -m jitterlab.testbed.worker`) imports this package first, and must not pay for pandas,
the simulator and the capture analysis, which only the driver needs."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jitterlab.testbed.driver import accuracy as accuracy
    from jitterlab.testbed.driver import run as run
    from jitterlab.testbed.driver import reload as reload
    from jitterlab.testbed.driver import write as write
    from jitterlab.testbed.net import Network as Network
    from jitterlab.testbed.net import TestbedError as TestbedError
    from jitterlab.testbed.net import cleanup as cleanup
    from jitterlab.testbed.net import require_root as require_root

# a literal list: type checkers and stubtest read __all__ without running the module
__all__ = ["run", "reload", "write", "accuracy", "Network", "TestbedError", "cleanup", "require_root"]
_FROM_DRIVER = frozenset(__all__)


def __getattr__(name: str) -> Any:
    if name in _FROM_DRIVER:
        value = getattr(importlib.import_module("jitterlab.testbed.driver"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    try:  # a part not imported yet (jitterlab.testbed.plan ...), as a plain import would give
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
