"""The parts of the services' `Settings`, each field declared once with its variable.

A field is declared by `setting`: its default, the environment variable that sets it (or none:
a knob only code sets), a line of help and, where its type does not say how to read it, a
parser. `gameserver.runtime.settings` reads the environment by these declarations and
`gameserver.runtime.settings_table` writes the documented table from them. Nothing heavier than
the standard library is imported here: the CLI loads it before it needs Redis.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

from gameserver.runtime.redis_auth import without_credentials

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DAY = 86_400
ON_WORDS = ("1", "true", "yes", "on")
OFF_WORDS = ("0", "false", "no", "off")


def setting(
    default: Any = MISSING,
    *,
    env: str | None,
    doc: str,
    parse: Callable[[str], Any] | None = None,
    shown: str | None = None,
    factory: Callable[[], Any] | None = None,
    secret: bool = False,
) -> Any:
    """A field of a part: ``env`` sets it (None: only code does), ``doc`` says what it is,
    ``parse`` reads the variable (by default as the field's type), ``shown`` is the default as
    the table prints it, ``secret`` keeps the value out of reprs and error messages."""
    metadata = {"env": env, "doc": doc, "parse": parse, "shown": shown, "secret": secret}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata, repr=not secret)
    return field(default=default, metadata=metadata, repr=not secret)


def default_consumer_name() -> str:
    """A consumer name unique per process.

    Two processes sharing a consumer name would share one pending list in the group, and a
    restarted process would inherit entries it never read; host, pid and a random suffix avoid
    both. Entries left pending by a dead consumer are taken over by `XAUTOCLAIM`.
    """
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def as_variable(value: Any) -> str:
    """A field's value as a variable holds it (the inverse of its parser)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# -- parsers: each raises ValueError saying what it expected -----------------------------------


def switch(text: str) -> bool:
    """``on``/``off`` (also 1/0, true/false, yes/no)."""
    word = text.strip().lower()
    if word in ON_WORDS:
        return True
    if word in OFF_WORDS:
        return False
    raise ValueError("expected on or off")


def whole(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError("expected a whole number") from None


def whole_from(low: int) -> Callable[[str], int]:
    """A whole number of at least ``low`` (a smaller one is an error)."""

    def parse(text: str) -> int:
        value = whole(text)
        if value < low:
            raise ValueError(f"expected a whole number of at least {low}")
        return value

    return parse


positive = whole_from(1)
non_negative = whole_from(0)


def at_least_one(text: str) -> int:
    """A count that is at least one (smaller counts are taken as one, as ever)."""
    return max(1, whole(text))


def one_of(*choices: str, upper: bool = False) -> Callable[[str], str]:
    def parse(text: str) -> str:
        word = text.strip().upper() if upper else text.strip().lower()
        if word not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return word

    return parse


def access_sample(text: str) -> float:
    """``on`` (every request), ``off`` or the share of requests logged (``0.01``)."""
    named = {"on": 1.0, "true": 1.0, "off": 0.0, "false": 0.0}
    word = text.strip().lower()
    value = named[word] if word in named else float(word)
    if not 0.0 <= value <= 1.0:
        raise ValueError("expected on, off or a share between 0 and 1")
    return value


def networks(text: str) -> str:
    """Addresses or networks, comma-separated (checked, kept as written)."""
    for item in text.split(","):
        if item.strip():
            try:
                ipaddress.ip_network(item.strip(), strict=False)
            except ValueError:
                raise ValueError(f"{item.strip()!r} is no address or network") from None
    return text.strip()


def origins(text: str) -> tuple[str, ...]:
    """Comma-separated browser origins (``https://table.example``), without a trailing /."""
    return tuple(item.strip().rstrip("/") for item in text.split(",") if item.strip())


# -- the parts ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """The Redis of the deployment, its key layout and how durable a write is."""

    redis_url: str = setting(
        DEFAULT_REDIS_URL,
        env="REDIS_URL",
        doc="Redis: bus, store, read models (`redis+cluster://host:port/`: a Redis Cluster)",
    )
    redis_user: str | None = setting(
        None, env="RENATURE_REDIS_USER", doc="this service's ACL user (`redis_auth`)"
    )
    redis_password: str | None = setting(
        None, env="RENATURE_REDIS_PASSWORD", doc="that user's password", secret=True
    )
    redis_password_file: str | None = setting(
        None,
        env="RENATURE_REDIS_PASSWORD_FILE",
        doc="or a file holding the password (a mounted secret)",
    )
    prefix: str = setting(
        "rn", env="RENATURE_PREFIX", doc="key prefix of the event store and read models"
    )
    partitions: int = setting(
        16,
        env="RENATURE_PARTITIONS",
        doc="partition count (part of the key layout)",
        parse=positive,
    )
    command_partitions: int = setting(
        4,
        env="RENATURE_COMMAND_PARTITIONS",
        doc="command streams (a divisor of the partitions)",
        parse=positive,
    )
    durability: str = setting(
        "always",
        env="RENATURE_DURABILITY",
        doc="`always`, `replica` or `everysec` (what an acknowledged move survives)",
        parse=one_of("always", "replica", "everysec"),
    )
    durability_replicas: int = setting(
        1,
        env="RENATURE_DURABILITY_REPLICAS",
        doc="replicas a write waits for under `replica`",
        parse=positive,
    )

    def __repr__(self) -> str:  # the URL may hold a password: never shown
        shown = {spec.name: getattr(self, spec.name) for spec in fields(self) if spec.repr} | {
            "redis_url": without_credentials(self.redis_url)
        }
        return f"StoreSettings({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


@dataclass(frozen=True, slots=True)
class ConsumerSettings:
    """How a service instance reads its streams in the consumer groups."""

    consumer: str = setting(
        env="RENATURE_CONSUMER",
        doc="consumer name in the consumer groups (one per process)",
        factory=default_consumer_name,
        shown="`<host>-<pid>-<random>`",
    )
    rules_partitions: str = setting(
        "all",
        env="RENATURE_RULES_PARTITIONS",
        doc="command partitions a rules instance reads: `all`, `0-1,3`, or its share `K/N`"
        " (instance K of N: the partitions p with p % N == K)",
    )
    projector_partitions: str = setting(
        "all",
        env="RENATURE_PROJECTOR_PARTITIONS",
        doc="game partitions (feeds) a projector instance reads: `all`, `0-7,12` or `K/N`",
    )
    # The read models are off the answer's path: a few milliseconds later there cost no player
    # anything, and one read then takes the moves of several games (docs/services.md, "The
    # projectors' linger").
    projector_linger_ms: int = setting(
        10,
        env="RENATURE_PROJECTOR_LINGER_MS",
        doc="a projector waits this long (ms) after a batch short of full before its next read,"
        " so that one read takes more moves (0: read again at once)",
        parse=non_negative,
    )
    # Well under the gateway's 10 s command timeout: a stalled instance's batch is taken over
    # (and answered) by another one in time; taking a batch twice is harmless (idempotency).
    reclaim_idle_ms: int = setting(
        4_000,
        env="RENATURE_RECLAIM_IDLE_MS",
        doc="pending entries idle this long (ms) are taken over by another instance, and a"
        " share's entries waiting this long are read by another share's instance",
    )
    reclaim_interval_s: float = setting(10.0, env=None, doc="how often pending entries are read")
    cache_games: int = setting(10_000, env=None, doc="game states a service keeps in memory")


@dataclass(frozen=True, slots=True)
class LoggingSettings:
    """The JSON logs."""

    log_level: str = setting(
        "INFO",
        env="RENATURE_LOG_LEVEL",
        doc="log level of the JSON logs",
        parse=one_of("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL", upper=True),
    )
    access_log_sample: float = setting(
        0.0,
        env="RENATURE_ACCESS_LOG",
        doc="the gateway's access log and sockets' lines: `on`, `off` or a sampled share (`0.01`)",
        parse=access_sample,
        shown="`off`",
    )
    opentelemetry: bool = setting(
        False,
        env="RENATURE_OPENTELEMETRY",
        doc="FastAPI's OpenTelemetry in the gateway: `on` or `off`; unset: on where an `OTEL_*`"
        " variable is set or `FASTAPI_OTEL_AUTO_CONFIGURE=true`",
        parse=switch,
        shown="unset",
    )


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    """What the gateway lets a request do."""

    # Whoever chooses a seed knows every hand: only test, bot and tournament servers allow it.
    allow_chosen_seeds: bool = setting(
        False,
        env="RENATURE_ALLOW_CHOSEN_SEEDS",
        doc="`POST /games` may take a seed (tests, bots; whoever chooses it knows every hand)",
        shown="`off`",
    )
    max_body_bytes: int = setting(
        65_536,
        env="RENATURE_MAX_BODY_BYTES",
        doc="the largest request body the gateway reads (bytes)",
        parse=positive,
    )
    token_ttl_after_end_s: int | None = setting(
        3600,
        env="RENATURE_TOKEN_TTL_AFTER_END_S",
        doc="seat tokens lapse this long (s) after their game's end",
    )


@dataclass(frozen=True, slots=True)
class RateLimits:
    """The gateway's rate limits, in the `limits` library's notation ("30/minute;300/hour")."""

    enabled: bool = setting(
        True,
        env="RENATURE_RATE_LIMITS",
        doc="the gateway's rate limits (docs/security.md)",
        shown="`on`",
    )
    create: str = setting(
        "20/minute;200/hour",
        env="RENATURE_LIMIT_CREATE",
        doc="games created and seats taken, per address",
    )
    seat: str = setting(
        "30/second", env="RENATURE_LIMIT_SEAT", doc="a seat's requests, per seat token"
    )
    read: str = setting(
        "20/second", env="RENATURE_LIMIT_READ", doc="anyone else's requests, per address"
    )
    refused: str = setting(
        "30/minute", env="RENATURE_LIMIT_REFUSED", doc="a seat's refused requests"
    )
    refused_per_address: str = setting(
        "120/minute",
        env="RENATURE_LIMIT_REFUSED_PER_ADDRESS",
        doc="anyone else's refused requests, per address",
    )
    live: str = setting(
        "30/minute",
        env="RENATURE_LIMIT_LIVE",
        doc="spectators' live connections opened, per address",
    )
    dispute: str = setting(
        "30/minute;300/hour",
        env="RENATURE_LIMIT_DISPUTE",
        doc="disputed files uploaded, per address",
    )
    live_per_address: int = setting(
        20, env="RENATURE_LIMIT_LIVE_PER_ADDRESS", doc="spectators' live connections per address"
    )
    live_per_game: int = setting(
        200, env="RENATURE_LIMIT_LIVE_PER_GAME", doc="spectators' live connections per game"
    )
    live_per_seat: int = setting(
        4, env="RENATURE_LIMIT_LIVE_PER_SEAT", doc="a seat's live connections open at once"
    )
    lease: int = setting(
        16,
        env="RENATURE_LIMIT_LEASE",
        doc="units of a bucket a worker takes from Redis at once and spends in process (at most "
        "a tenth of the limit; 1: every request counted in Redis; docs/security.md's bound)",
        parse=at_least_one,
    )
    spectator_frames: float = setting(
        1000.0,
        env="RENATURE_LIMIT_SPECTATOR_FRAMES",
        doc="spectators' live frames a second per gateway worker, all together (paced)",
    )


@dataclass(frozen=True, slots=True)
class FrontDoor:
    """The gateway's server: workers, whom it trusts, and its bounds on slow and huge requests
    (`gateway.front_door`)."""

    gateway_workers: int = setting(
        1,
        env="RENATURE_GATEWAY_WORKERS",
        doc="gateway worker processes sharing its port",
        parse=at_least_one,
    )
    trusted_proxies: str = setting(
        "",
        env="RENATURE_TRUSTED_PROXIES",
        doc="proxies whose `X-Forwarded-For` is believed (`10.0.0.0/8,127.0.0.1`)",
        parse=networks,
        shown="none",
    )
    header_timeout_s: float = setting(
        10.0,
        env="RENATURE_HEADER_TIMEOUT_S",
        doc="seconds for a request's head, from connect or the last answer",
    )
    body_timeout_s: float = setting(
        30.0,
        env="RENATURE_BODY_TIMEOUT_S",
        doc="seconds for a request's body, from the end of its head",
    )
    max_header_bytes: int = setting(
        32 * 1024,
        env="RENATURE_MAX_HEADER_BYTES",
        doc="the largest request head (bytes)",
        parse=positive,
    )
    max_headers: int = setting(
        64, env="RENATURE_MAX_HEADERS", doc="the most header lines of a request", parse=positive
    )
    connections_per_address: int = setting(
        64,
        env="RENATURE_CONNECTIONS_PER_ADDRESS",
        doc="connections open per client address and worker (trusted proxies exempt)",
        parse=positive,
    )
    max_connections: int = setting(
        4096, env="RENATURE_MAX_CONNECTIONS", doc="connections open per worker", parse=positive
    )
    keep_alive_s: float = setting(
        5.0, env="RENATURE_KEEP_ALIVE_S", doc="seconds a connection may idle between requests"
    )


@dataclass(frozen=True, slots=True)
class Frontends:
    """What browsers may do across origins."""

    cors_origins: tuple[str, ...] = setting(
        (),
        env="RENATURE_CORS_ORIGINS",
        doc="browser origins allowed to call the API, comma-separated",
        parse=origins,
        shown="none",
    )


@dataclass(frozen=True, slots=True)
class Identity:
    """A frontend's identity provider, whose signed tokens bind seats to users (all three or
    none)."""

    oidc_issuer: str = setting(
        "", env="RENATURE_OIDC_ISSUER", doc="its issuer (none: no accounts)", shown="none"
    )
    oidc_audience: str = setting(
        "", env="RENATURE_OIDC_AUDIENCE", doc="the audience its tokens are for", shown="none"
    )
    oidc_jwks: str = setting(
        "",
        env="RENATURE_OIDC_JWKS",
        doc="its key set: an `https://` JWKS URL or file",
        shown="none",
    )

    @property
    def configured(self) -> bool:
        return bool(self.oidc_issuer)


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """How long things stay in Redis (the retention service)."""

    lobby_ttl_s: int = setting(
        DAY, env="RENATURE_LOBBY_TTL_S", doc="a lobby that never started stays this long (s)"
    )
    refused_outcome_ttl_s: int = setting(
        900,
        env="RENATURE_REFUSED_OUTCOME_TTL_S",
        doc="a refused command's outcome stays this long (s)",
    )
    finished_grace_s: int = setting(
        900,
        env="RENATURE_FINISHED_GRACE_S",
        doc="a finished game is packed this long (s) after its end",
    )
    archive_dir: str | None = setting(
        None,
        env="RENATURE_ARCHIVE_DIR",
        doc="folder that old finished games are archived to (the CLI reads it too)",
        shown="none",
    )
    archive_after_s: int = setting(
        7 * DAY,
        env="RENATURE_ARCHIVE_AFTER_S",
        doc="a packed game is archived this long (s) after its end",
    )
    consumer_idle_s: int = setting(
        DAY,
        env="RENATURE_CONSUMER_IDLE_S",
        doc="consumers idle this long (s) without pending entries are removed",
    )
    interval_s: float = setting(
        60.0, env="RENATURE_INTERVAL_S", doc="seconds between retention passes"
    )

    def with_(self, **changes: Any) -> RetentionPolicy:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class Signing:
    """The rules service's signing key (signed records)."""

    signing_key_file: str | None = setting(
        None,
        env="RENATURE_SIGNING_KEY_FILE",
        doc="PEM private key that seals games (none: nothing is signed)",
        shown="none",
    )
