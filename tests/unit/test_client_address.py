"""Whom the gateway believes about a client's address: only the trusted proxies,
read from the right of the forwarded chain; nothing by default."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gameserver.cli import app as cli
from gameserver.gateway.client_address import TrustedNetworks, forwarded_chain
from gameserver.runtime.settings import Settings

TRUSTED = TrustedNetworks.parse("10.0.0.0/8, 127.0.0.1,2001:db8::/32")


def headers(**values: str) -> list[tuple[bytes, bytes]]:
    return [(name.replace("_", "-").encode(), value.encode()) for name, value in values.items()]


@pytest.mark.parametrize(
    ("peer", "sent", "client"),
    [
        ("192.0.2.1", headers(x_forwarded_for="203.0.113.5"), "192.0.2.1"),  # not a proxy
        ("10.1.2.3", headers(x_forwarded_for="203.0.113.5"), "203.0.113.5"),
        ("10.1.2.3", headers(x_forwarded_for="198.51.100.1, 203.0.113.5"), "203.0.113.5"),
        ("10.1.2.3", headers(x_forwarded_for="203.0.113.5, 10.9.9.9"), "203.0.113.5"),
        ("10.1.2.3", headers(forwarded='for="[2001:db9::1]:4711";proto=https'), "2001:db9::1"),
        ("10.1.2.3", headers(forwarded="for=203.0.113.5:80, for=10.0.0.7"), "203.0.113.5"),
        ("10.1.2.3", [], "10.1.2.3"),  # a proxy that names no one: the proxy
        ("127.0.0.1", headers(x_forwarded_for="10.0.0.1, 127.0.0.1"), "10.0.0.1"),
    ],
)
def test_the_client_is_the_first_untrusted_address_from_the_right(
    peer: str, sent: list[tuple[bytes, bytes]], client: str
) -> None:
    assert TRUSTED.client_of(peer, sent) == client


def test_nothing_is_trusted_by_default() -> None:
    assert Settings.from_env({}).front_door.trusted_proxies == ""
    nobody = TrustedNetworks.parse(Settings.from_env({}).front_door.trusted_proxies)
    assert nobody.client_of("127.0.0.1", headers(x_forwarded_for="1.2.3.4")) == "127.0.0.1"
    assert Settings.from_env({"RENATURE_TRUSTED_PROXIES": "10.0.0.0/8"}).front_door.trusted_proxies


def test_x_forwarded_for_wins_over_forwarded() -> None:
    sent = headers(forwarded="for=198.51.100.1", x_forwarded_for="203.0.113.5")
    assert forwarded_chain(sent) == ["203.0.113.5"]


def test_a_word_that_is_no_address_is_refused_by_the_setting_and_the_cli() -> None:
    with pytest.raises(ValueError, match=r"proxy\.example"):
        TrustedNetworks.parse("10.0.0.0/8,proxy.example")
    result = CliRunner().invoke(cli, ["serve", "gateway", "--trusted-proxies", "proxy.example"])
    assert result.exit_code == 2
    assert "proxy.example" in result.output
