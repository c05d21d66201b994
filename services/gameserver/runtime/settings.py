"""The settings of the services: one object of parts, read from the environment once.

`Settings.from_env` is the one function that reads the environment (twelve-factor style):
every service process (rules, board, score, clock, retention, gateway) reads the same
variables, so ``serve all`` configures its children by their environment. Everything else is
handed the settings, or the part it needs, by its caller. Each field declares its variable in
`gameserver.runtime.settings_parts`; the table of every variable is generated from those
declarations (`gameserver.runtime.settings_table`, docs/services.md). A bad value is an error
that names the variable.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gameserver.runtime.redis_auth import authenticated_url
from gameserver.runtime.settings_parts import (
    DEFAULT_REDIS_URL,
    ConsumerSettings,
    FrontDoor,
    Frontends,
    GatewaySettings,
    Identity,
    LoggingSettings,
    RateLimits,
    RetentionPolicy,
    Signing,
    StoreSettings,
    as_variable,
    default_consumer_name,
    switch,
    whole,
)

if TYPE_CHECKING:  # eventstore imports redis, which the CLI does not load until it must
    from eventstore import CommandPartitions, KeyLayout

__all__ = [
    "DEFAULT_REDIS_URL",
    "Settings",
    "SettingsError",
    "default_consumer_name",
    "variables",
]

WORKER_SETTINGS_ENV = "RENATURE_GATEWAY_SETTINGS"
"""How `gateway.server` hands its settings to its uvicorn worker processes (JSON)."""


class SettingsError(ValueError):
    """A variable of the environment holds a value its setting cannot take."""


def asks_for_opentelemetry(env: Mapping[str, str]) -> bool:
    """Whether the deployment asks for OpenTelemetry: an ``OTEL_*`` variable (as the
    OpenTelemetry SDK and ``opentelemetry-instrument`` read) or FastAPI's own
    ``FASTAPI_OTEL_AUTO_CONFIGURE=true``."""
    if env.get("FASTAPI_OTEL_AUTO_CONFIGURE", "").lower() == "true":
        return True
    return any(name.startswith("OTEL_") for name in env)


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting of the services, in parts (`gameserver.runtime.settings_parts`)."""

    store: StoreSettings = field(default_factory=StoreSettings)
    consumers: ConsumerSettings = field(default_factory=ConsumerSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    gateway: GatewaySettings = field(default_factory=GatewaySettings)
    limits: RateLimits = field(default_factory=RateLimits)
    front_door: FrontDoor = field(default_factory=FrontDoor)
    frontends: Frontends = field(default_factory=Frontends)
    identity: Identity = field(default_factory=Identity)
    retention: RetentionPolicy = field(default_factory=RetentionPolicy)
    signing: Signing = field(default_factory=Signing)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """The settings the environment (``os.environ`` unless given) names; keyword
        ``overrides`` (fields by name, as `with_` takes them) that are not None win.
        `SettingsError` names the variable of a bad value."""
        env = os.environ if env is None else env
        parts = {name: _read_part(kind, env) for name, kind in _part_types().items()}
        settings = cls(**parts).with_(**{k: v for k, v in overrides.items() if v is not None})
        identity = settings.identity
        if identity.oidc_issuer and not (identity.oidc_audience and identity.oidc_jwks):
            raise SettingsError(
                "RENATURE_OIDC_ISSUER is set: RENATURE_OIDC_AUDIENCE and RENATURE_OIDC_JWKS "
                "must be too"
            )
        if not env.get("RENATURE_OPENTELEMETRY", "").strip():  # unset: as the deployment asks
            settings = settings.with_(opentelemetry=asks_for_opentelemetry(env))
        return settings.with_(redis_url=_with_credentials(settings.store))

    @classmethod
    def of(cls, **fields: Any) -> Settings:
        """The defaults with some fields set by name (``Settings.of(redis_url=..., consumer=
        ...)``); no environment is read."""
        return cls().with_(**fields)

    def with_(self, **changes: Any) -> Settings:
        """A copy with some parts (by part name) or fields (by field name) changed."""
        parts: dict[str, Any] = {}
        fields_of: dict[str, dict[str, Any]] = {}
        owners = _owners()
        for name, value in changes.items():
            if name in _part_types():
                parts[name] = value
            elif name in owners:
                fields_of.setdefault(owners[name], {})[name] = value
            else:
                raise TypeError(f"Settings have no part or field named {name!r}")
        for part, values in fields_of.items():
            parts[part] = replace(parts.get(part, getattr(self, part)), **values)
        return replace(self, **parts)

    # -- the gateway's worker processes ------------------------------------------------------

    def hand_to_workers(self) -> None:
        """Put these settings where `handed_to_worker` finds them in a worker process that
        this one starts (uvicorn's workers inherit the environment)."""
        import msgspec

        os.environ[WORKER_SETTINGS_ENV] = msgspec.json.encode(self).decode()

    @classmethod
    def handed_to_worker(cls) -> Settings:
        """The settings `hand_to_workers` handed to this process (with a consumer name of its
        own), or the environment's where none were."""
        import msgspec

        text = os.environ.get(WORKER_SETTINGS_ENV)
        if not text:
            return cls.from_env()
        return msgspec.json.decode(text, type=cls).with_(consumer=default_consumer_name())

    # -- derived -----------------------------------------------------------------------------

    @property
    def layout(self) -> KeyLayout:
        """The key layout every service of the deployment shares."""
        from eventstore import KeyLayout

        return KeyLayout(self.store.prefix, self.store.partitions)

    @property
    def commands(self) -> CommandPartitions:
        """The command streams and which game goes to which (senders and rules services)."""
        from eventstore import CommandPartitions

        return CommandPartitions(self.layout, self.store.command_partitions)


def variables(**fields: Any) -> dict[str, str]:
    """The environment that sets these fields (by name) in a child process's settings."""
    found: dict[str, str] = {}
    for name, value in fields.items():
        spec = {spec.name: spec for spec, _ in declared(_part_types()[_owners()[name]])}[name]
        if not spec.metadata.get("env"):
            raise TypeError(f"{name} is set by no variable")
        found[spec.metadata["env"]] = as_variable(value)
    return found


def declared(part: type[Any]) -> Iterator[tuple[dataclasses.Field[Any], Any]]:
    """The fields of a part with their resolved types."""
    hints = typing.get_type_hints(part)
    for spec in dataclasses.fields(part):
        yield spec, hints[spec.name]


def parts() -> dict[str, type[Any]]:
    """The parts of `Settings` by name, in their order."""
    return dict(_part_types())


@functools.cache
def _part_types() -> dict[str, type[Any]]:
    return dict(typing.get_type_hints(Settings))


@functools.cache
def _owners() -> dict[str, str]:
    """Which part each field belongs to (field names are unique across the parts)."""
    return {
        spec.name: name for name, kind in _part_types().items() for spec in dataclasses.fields(kind)
    }


def _read_part(part: type[Any], env: Mapping[str, str]) -> Any:
    """The part with each field its variable sets (an empty variable is an unset one)."""
    values: dict[str, Any] = {}
    for spec, kind in declared(part):
        variable = spec.metadata.get("env")
        text = env.get(variable) if variable else None
        if not text:
            continue
        parse = spec.metadata.get("parse") or _reader(kind)
        try:
            values[spec.name] = parse(text)
        except ValueError as error:
            shown = "" if spec.metadata.get("secret") else f"={text!r}"
            raise SettingsError(f"{variable}{shown}: {error}") from None
    return part(**values)


def _reader(kind: Any) -> Callable[[str], Any]:
    """How a variable is read as a field of type ``kind``."""
    readers: dict[Any, Callable[[str], Any]] = {
        int: whole,
        float: _number,
        bool: switch,
        str: str,
    }
    optional = [arg for arg in typing.get_args(kind) if arg is not type(None)]
    if kind not in readers and len(optional) == 1:  # ``int | None``: read as an int
        kind = optional[0]
    return readers[kind]


def _number(text: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise ValueError("expected a number") from None


def _with_credentials(store: StoreSettings) -> str:
    """The Redis URL with this service's ACL user and password (`redis_auth`)."""
    password = store.redis_password
    if password is None and store.redis_password_file:
        try:
            text = Path(store.redis_password_file).read_text(encoding="utf-8")
        except OSError as error:
            raise SettingsError(
                f"RENATURE_REDIS_PASSWORD_FILE: cannot read {store.redis_password_file}: "
                f"{error.strerror}"
            ) from None
        password = text.strip() or None
    return authenticated_url(store.redis_url, store.redis_user, password)
