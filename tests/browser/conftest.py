"""The browser tests' stack and browser, one of each per test module (modules run side by side
in the suite's workers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from devkit.requirements import chromium_path
from support.browser_pages import CHROMIUM_ARGS, REDIS_OF, SERVER_OF
from support.web_stack import serve_all


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """``renature serve all`` on a private Redis, as ``make run`` starts it."""
    # Every page of a module (players, spectators, the tests' own requests) shares one address
    # here, and they play far faster than people do: the default read rate per address would
    # slow them down (the client waits 429s out), and a module's games, seats and deliberately
    # refused moves from that one address can pass the per-address quotas for creations and
    # refusals (in one CI run a game's creation led nowhere, 30 s, with nothing in the server's
    # log, which logs every 5xx: a 429). Once reads lost their thread hop, a module's pages
    # polled faster and met the read quota's minute window too (the host's join, a tokenless
    # request, is a read: it waited out up to a minute, past the test's 30 s). test_limits
    # covers the limits themselves.
    with serve_all(
        RENATURE_LIMIT_READ="400/second;60000/minute",
        RENATURE_LIMIT_CREATE="600/minute;6000/hour",
        RENATURE_LIMIT_REFUSED="600/minute",
        RENATURE_LIMIT_REFUSED_PER_ADDRESS="1200/minute",
    ) as stack:
        REDIS_OF[stack.url] = stack.redis_url
        SERVER_OF[stack.url] = stack.redis
        yield stack.url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    path = chromium_path()
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()
