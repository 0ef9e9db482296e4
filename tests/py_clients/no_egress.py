"""Run a Python script with every connection to a host other than loopback refused before any packet
leaves, and recorded: the Python twin of tests/morph_clients/no_egress.cjs.

    python no_egress.py SCRIPT [ARGS...]

Every TCP or UDP client in Python (socket, http.client, urllib, httpx and httpcore, sync or asyncio)
resolves names with `socket.getaddrinfo` and opens its socket with `socket.socket.connect` (asyncio's
too, on a non-blocking socket), or sends a datagram with `sendto`: those are the gates. A name that is
not loopback is refused before it is looked up (a DNS query would leave the machine), an address
before it is connected to, each like a closed port (ConnectionRefusedError), so callers take their
error path. Each attempt is appended as a JSON line {host, port, pid, stack} to the file named by
NO_EGRESS_LOG (when set) and to stderr. NO_EGRESS_STRICT=1 refuses loopback as well: the guard's own
test uses it to check that each client library goes through the gate.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import os
import runpy
import socket
import sys
import traceback

LOG = os.environ.get("NO_EGRESS_LOG")
STRICT = os.environ.get("NO_EGRESS_STRICT") == "1"


def is_loopback(host) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    h = str(host).strip("[]").lower()
    if h == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(h.split("%", 1)[0])
    except ValueError:
        return False
    return ip.is_loopback or (ip.version == 6 and ip.ipv4_mapped is not None and ip.ipv4_mapped.is_loopback)


def _refuse(host, port) -> ConnectionRefusedError:
    record = {"host": str(host), "port": port, "pid": os.getpid(),
              "stack": [f"{f.filename}:{f.lineno} {f.name}" for f in traceback.extract_stack()[-8:-2]]}
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
    sys.stderr.write(f"no_egress: refused a connection to {host}:{port}\n")
    return ConnectionRefusedError(errno.ECONNREFUSED, f"connection to {host}:{port} refused (no_egress)")


def _allowed(family, address) -> tuple[bool, object, object]:
    if family == getattr(socket, "AF_UNIX", None):
        return True, address, None  # a local socket file
    host, port = (address[0], address[1]) if isinstance(address, tuple) else (address, None)
    return (not STRICT and is_loopback(host)), host, port


_connect, _connect_ex, _sendto = socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto
_getaddrinfo = socket.getaddrinfo


def connect(self, address):
    ok, host, port = _allowed(self.family, address)
    if not ok:
        raise _refuse(host, port)
    return _connect(self, address)


def connect_ex(self, address):
    ok, host, port = _allowed(self.family, address)
    if not ok:
        _refuse(host, port)
        return errno.ECONNREFUSED
    return _connect_ex(self, address)


def sendto(self, data, *args):
    address = args[-1]
    ok, host, port = _allowed(self.family, address)
    if not ok:
        raise _refuse(host, port)
    return _sendto(self, data, *args)


def getaddrinfo(host, port, *args, **kwargs):
    if STRICT or not is_loopback(host):
        raise _refuse(host, port)
    return _getaddrinfo(host, port, *args, **kwargs)


def install() -> None:
    socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto = connect, connect_ex, sendto
    socket.getaddrinfo = getaddrinfo


if __name__ == "__main__":
    install()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
