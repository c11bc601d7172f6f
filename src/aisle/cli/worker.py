"""One worker process of a service, on its own ``SO_REUSEPORT`` listening socket (``aisle serve`` runs these).

``python -m aisle.cli.worker MODULE --host H --port P [--log-config FILE]`` serves
``MODULE:create_app`` with uvicorn (``uvicorn.Server.run(sockets=...)``) on a socket of its own bound with
``SO_REUSEPORT`` (Linux 3.9+, ``socket(7)``): every worker of a service binds the same port and the
kernel spreads new connections over their sockets by a hash of the connection's addresses.

Why not ``uvicorn --workers N``: its workers share one listening socket, and the first one awake
accepts every pending connection (asyncio accepts up to the backlog per wake-up). A burst of keep-alive
connections, which a load balancer or a benchmark client opens at once, then stays on one worker: in
issue 18's bench one of two search workers held all 32 connections in some runs, and the service used
one core of two.

The worker sets Python's thread switch interval from ``AISLE_GIL_SWITCH_MS`` first (see
:class:`aisle.core.config.Settings`).
"""

from __future__ import annotations

import argparse
import socket
import sys


def reuseport_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A listening TCP socket on ``(host, port)`` with ``SO_REUSEPORT`` (and ``SO_REUSEADDR``) set.

    Raises:
        OSError: the address cannot be bound (taken by a socket without ``SO_REUSEPORT``, or by
            another user).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    return sock


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    from aisle.core.config import load_settings

    sys.setswitchinterval(load_settings().gil_switch_ms / 1000)  # see Settings.gil_switch_ms
    parser = argparse.ArgumentParser(prog="python -m aisle.cli.worker", description=__doc__)
    parser.add_argument("module", help="the service's app module (its create_app is the factory)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log-config", default=None, help="uvicorn's logging configuration (JSON)")
    args = parser.parse_args(argv)
    logging = {"log_config": args.log_config} if args.log_config else {}
    config = uvicorn.Config(
        f"{args.module}:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        access_log=False,
        log_level="warning",
        **logging,  # type: ignore[arg-type]
    )
    uvicorn.Server(config).run(sockets=[reuseport_socket(args.host, args.port)])


if __name__ == "__main__":
    main()
