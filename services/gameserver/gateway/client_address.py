"""The client's real address: the TCP peer, or what a trusted proxy in front says it is.

Limits key on the client's address, so behind a proxy (an ingress, a load balancer, the
shipped nginx) the gateway must learn the address the proxy saw, and only from the proxy:
a header any client can send must not move a client into another's bucket or out of its own.

``RENATURE_TRUSTED_PROXIES`` (``renature serve gateway --trusted-proxies``) lists the proxies
whose ``X-Forwarded-For`` is believed, as addresses or networks (``10.0.0.0/8,127.0.0.1``);
nothing is trusted by default (uvicorn's own header handling, which trusts 127.0.0.1 unless
told otherwise, is switched off in `gateway.server`). `TrustedProxies`, an ASGI middleware in
front of everything else, rewrites the scope's ``client`` of a request that came from a
trusted proxy: the chain of ``X-Forwarded-For`` (or, without one, the ``for=`` of
``Forwarded``, RFC 7239) is read from the right, skipping trusted proxies; the first address
that is not one is the client. A request from anyone else keeps its TCP peer, whatever
headers it sends.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_HOPS = 16
"""The most forwarded addresses read from the right (a longer chain is a client's invention)."""


class TrustedNetworks:
    """The trusted proxies: a set of addresses and networks."""

    def __init__(self, networks: Iterable[Network] = ()) -> None:
        self.networks = tuple(networks)

    @classmethod
    def parse(cls, text: str) -> TrustedNetworks:
        """``"10.0.0.0/8, 127.0.0.1"``; empty: none. A word that is no address is an error."""
        networks = []
        for word in text.replace(";", ",").split(","):
            if word.strip():
                try:
                    networks.append(ipaddress.ip_network(word.strip(), strict=False))
                except ValueError as error:
                    raise ValueError(f"not an address or network: {word.strip()!r}") from error
        return cls(networks)

    def __bool__(self) -> bool:
        return bool(self.networks)

    def __contains__(self, address: object) -> bool:
        if not self.networks or not isinstance(address, str):
            return False
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.networks)

    def client_of(self, peer: str, headers: Iterable[tuple[bytes, bytes]]) -> str:
        """The client's address of a request whose TCP peer is ``peer``."""
        if peer not in self:
            return peer
        chain = forwarded_chain(headers)
        for address in reversed(chain[-MAX_HOPS:]):
            if address not in self:
                return address
        return chain[0] if chain else peer


def forwarded_chain(headers: Iterable[tuple[bytes, bytes]]) -> list[str]:
    """The addresses a request was forwarded for, the client's first: ``X-Forwarded-For``
    (every such header, in order), or ``Forwarded``'s ``for=`` without one."""
    forwarded_for: list[str] = []
    forwarded: list[str] = []
    for name, value in headers:
        if name == b"x-forwarded-for":
            forwarded_for += [part.strip() for part in value.decode("latin-1").split(",")]
        elif name == b"forwarded":
            forwarded += _forwarded_for(value.decode("latin-1"))
    chain = forwarded_for or forwarded
    return [_address(part) for part in chain if part]


def _forwarded_for(value: str) -> list[str]:
    found = []
    for element in value.split(","):
        for pair in element.split(";"):
            key, _, word = pair.strip().partition("=")
            if key.strip().lower() == "for":
                found.append(word.strip().strip('"'))
    return found


def _address(word: str) -> str:
    """An address without its port (``[2001:db8::1]:4711``, ``192.0.2.1:80``), bounded."""
    word = word.strip()[:64]
    if word.startswith("["):
        return word[1:].partition("]")[0]
    if word.count(":") == 1:
        return word.partition(":")[0]
    return word


class TrustedProxies:
    """The ASGI middleware: the scope's ``client`` is the real client's (module docstring)."""

    def __init__(self, app: ASGIApp, trusted: TrustedNetworks) -> None:
        self.app = app
        self.trusted = trusted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and self.trusted:
            client = scope.get("client")
            if client:
                address = self.trusted.client_of(str(client[0]), scope.get("headers", ()))
                if address != client[0]:
                    scope = {**scope, "client": (address, 0)}
        await self.app(scope, receive, send)
