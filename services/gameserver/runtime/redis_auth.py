"""Per-service Redis credentials: Redis locked down, each service its own ACL user.

Each service connects as its own ACL user (``rules``, ``gateway``, ``board``, ``score``,
``clock``, ``retention``; infra/redis/users.acl says what each may do) with a password from a
secret. ``REDIS_URL`` names the server only; the credentials come from
``RENATURE_REDIS_USER`` and ``RENATURE_REDIS_PASSWORD`` or ``RENATURE_REDIS_PASSWORD_FILE`` (a
mounted secret), which `Settings.from_env` reads, and are put into the URL that every client of
the process is built from. A URL that carries credentials already is left as it is. Never log
the result: it holds the password.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit, urlunsplit


def authenticated_url(url: str, user: str | None, password: str | None) -> str:
    """``url`` with ``user`` and ``password``, unless it has its own or neither is given."""
    parts = urlsplit(url)
    if (user is None and password is None) or "@" in parts.netloc:
        return url
    userinfo = quote(user or "", safe="")
    if password is not None:
        userinfo += ":" + quote(password, safe="")
    return urlunsplit(parts._replace(netloc=f"{userinfo}@{parts.netloc}"))


_PASSWORD_IN_URL = re.compile(r"([a-z][a-z0-9+.-]*://[^:/?#@\s]*:)[^@/?#\s]*@", re.IGNORECASE)
"""The password of any URL in a text (``redis://user:PASSWORD@host``)."""


def redact_urls(text: str) -> str:
    """``text`` with the password of every URL in it masked (`without_credentials`), for
    messages and log lines that may quote a URL (a Redis client's error, a setting)."""
    return _PASSWORD_IN_URL.sub(r"\1***@", text) if "://" in text else text


def without_credentials(url: str) -> str:
    """``url`` safe to print: user kept, password masked."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))
