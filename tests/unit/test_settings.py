"""One `Settings`: read from the environment in one place, each variable declared once with its
default and meaning, the documented table generated from those declarations."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from gameserver.runtime import settings_table
from gameserver.runtime.settings import Settings, SettingsError, declared, parts, variables
from gameserver.runtime.settings_parts import RateLimits, as_variable

ROOT = Path(__file__).resolve().parents[2]
CHECKED = (ROOT / "shared", ROOT / "services")

READERS = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}
"""What of ``os`` reads (or writes) the environment."""

ALLOWED = {
    "services/gameserver/runtime/settings.py": "the one reader: `Settings.from_env`, and the "
    "hand-over of the gateway's settings to its worker processes",
    "shared/devkit/": "test tooling (the tests' Redis servers, nginx and what they require), "
    "never part of a service",
}
"""Modules (or folders) that may touch the environment as they like, each with its reason."""

WHOLE_ENVIRONMENT_TO_CHILDREN = {
    "services/gameserver/runtime/supervisor.py": "`serve all` hands its whole environment on "
    "to the services it spawns (`{**os.environ, ...}`), which read their settings from it",
}
"""Modules that may pass the whole environment to a child process, and do nothing else with it:
``**os.environ`` in a dict display is the one use allowed there."""

OPTION_DEFAULTS = {
    "services/gameserver/cli/serve_commands.py": "`serve all` starts a private Redis unless "
    "REDIS_URL names one: typer reads it as the default of --redis-url (the same value the "
    "settings read), and nothing else of the environment",
}
"""Modules whose command-line options may default to a variable (typer's ``envvar=``)."""


def environment_uses(source: str) -> list[tuple[int, str]]:
    """Every line of ``source`` that touches the environment: through ``os`` (``read``, or
    ``whole`` for ``**os.environ`` in a dict display: the whole environment handed on) or as a
    command-line option's default (``option``: typer's ``envvar=``)."""
    tree = ast.parse(source)
    spread = {
        id(value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for key, value in zip(node.keys, node.values, strict=True)
        if key is None
    }
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in READERS
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            whole = id(node) in spread and node.attr == "environ"
            found.append((node.lineno, "whole" if whole else "read"))
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [(node.lineno, "read") for alias in node.names if alias.name in READERS]
        elif isinstance(node, ast.Call):
            found += [(node.lineno, "option") for kw in node.keywords if kw.arg == "envvar"]
    return sorted(found)


def test_the_detector_sees_every_way_to_the_environment() -> None:
    source = (
        "import os\n"
        "from os import environ\n"
        "a = os.environ.get('X')\n"
        "b = os.getenv('Y')\n"
        "c = {**os.environ, 'Z': '1'}\n"
        "os.environ['W'] = 'v'\n"
        "d = os.getpid()\n"
        "e = typer.Option('--url', envvar='URL')\n"
    )
    found = environment_uses(source)
    assert found == [
        (2, "read"),
        (3, "read"),
        (4, "read"),
        (5, "whole"),
        (6, "read"),
        (8, "option"),
    ]


def test_only_the_settings_module_reads_the_environment() -> None:
    """Everything else is handed its settings by its caller (the allow-lists say why not)."""
    offenders = []
    for folder in CHECKED:
        for path in sorted(folder.rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if any(name == allowed or name.startswith(allowed) for allowed in ALLOWED):
                continue
            allowed_uses = {
                kind
                for kind, modules in (
                    ("whole", WHOLE_ENVIRONMENT_TO_CHILDREN),
                    ("option", OPTION_DEFAULTS),
                )
                if name in modules
            }
            for line, kind in environment_uses(path.read_text(encoding="utf-8")):
                if kind not in allowed_uses:
                    offenders.append(f"{name}:{line}")
    assert offenders == [], "read settings through gameserver.runtime.settings instead"


def test_the_documented_table_and_the_env_example_are_current() -> None:
    """``make settings-docs`` writes them from the declarations."""
    for path, text in settings_table.documents(ROOT).items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} is stale"


def test_every_variable_and_every_field_is_declared_once() -> None:
    names = [spec.name for kind in parts().values() for spec, _ in declared(kind)]
    assert len(names) == len(set(names))  # `with_` and `variables` take fields by name
    rows = settings_table.rows()
    assert len({row.variable for row in rows}) == len(rows)
    assert {"REDIS_URL", "RENATURE_RATE_LIMITS", "RENATURE_CORS_ORIGINS"} <= {
        row.variable for row in rows
    }
    assert all(row.meaning for row in rows)


def test_the_defaults_are_the_services_defaults() -> None:
    read = Settings.from_env({})
    assert read == Settings().with_(consumer=read.consumers.consumer)
    assert (read.store.redis_url, read.store.prefix, read.store.partitions) == (
        "redis://127.0.0.1:6379/0",
        "rn",
        16,
    )
    assert (read.store.durability, read.logging.log_level, read.limits.enabled) == (
        "always",
        "INFO",
        True,
    )
    assert (read.gateway.max_body_bytes, read.gateway.token_ttl_after_end_s) == (65_536, 3600)
    assert (read.front_door.gateway_workers, read.front_door.trusted_proxies) == (1, "")
    assert read.frontends.cors_origins == ()
    assert read.retention.archive_dir is None
    assert read.signing.signing_key_file is None


def test_each_variable_reads_back_what_the_table_writes() -> None:
    """Every declared variable is read by `Settings.from_env`: its default as the env
    example writes it reads back as that default, and another value changes its field."""
    for part, kind in parts().items():
        for spec, _ in declared(kind):
            variable = spec.metadata.get("env")
            if not variable or spec.default is dataclasses.MISSING or spec.default is None:
                continue
            written = as_variable(spec.default)
            if written:
                read = getattr(Settings.from_env({variable: written}), part)
                assert getattr(read, spec.name) == spec.default, variable


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"RENATURE_PREFIX": "alt"}, ("store", "prefix", "alt")),
        ({"RENATURE_LOG_LEVEL": "warning"}, ("logging", "log_level", "WARNING")),
        ({"RENATURE_DURABILITY": " Replica "}, ("store", "durability", "replica")),
        ({"RENATURE_RATE_LIMITS": "off"}, ("limits", "enabled", False)),
        ({"RENATURE_LIMIT_LIVE_PER_GAME": "7"}, ("limits", "live_per_game", 7)),
        ({"RENATURE_GATEWAY_WORKERS": "0"}, ("front_door", "gateway_workers", 1)),
        ({"RENATURE_KEEP_ALIVE_S": "2.5"}, ("front_door", "keep_alive_s", 2.5)),
        ({"RENATURE_ACCESS_LOG": "on"}, ("logging", "access_log_sample", 1.0)),
        ({"RENATURE_ALLOW_CHOSEN_SEEDS": "1"}, ("gateway", "allow_chosen_seeds", True)),
        (
            {"RENATURE_CORS_ORIGINS": "https://a.example/, https://b.example"},
            ("frontends", "cors_origins", ("https://a.example", "https://b.example")),
        ),
        ({"RENATURE_ARCHIVE_DIR": "/srv/archive"}, ("retention", "archive_dir", "/srv/archive")),
        ({"RENATURE_INTERVAL_S": "5"}, ("retention", "interval_s", 5.0)),
        ({"RENATURE_PROJECTOR_LINGER_MS": "0"}, ("consumers", "projector_linger_ms", 0)),
        ({"RENATURE_SIGNING_KEY_FILE": "k.pem"}, ("signing", "signing_key_file", "k.pem")),
        ({"RENATURE_PARTITIONS": ""}, ("store", "partitions", 16)),  # empty: unset
    ],
)
def test_variables_set_their_fields(env: dict[str, str], expected: tuple[str, str, object]) -> None:
    part, name, value = expected
    assert getattr(getattr(Settings.from_env(env), part), name) == value


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("RENATURE_PARTITIONS", "sixteen"),
        ("RENATURE_PARTITIONS", "0"),
        ("RENATURE_RECLAIM_IDLE_MS", "4s"),
        ("RENATURE_RATE_LIMITS", "maybe"),
        ("RENATURE_DURABILITY", "never"),
        ("RENATURE_LOG_LEVEL", "loud"),
        ("RENATURE_ACCESS_LOG", "2"),
        ("RENATURE_TRUSTED_PROXIES", "10.0.0.0/8,proxy.example"),
        ("RENATURE_KEEP_ALIVE_S", "five"),
        ("RENATURE_PROJECTOR_LINGER_MS", "-1"),
    ],
)
def test_a_bad_value_is_an_error_naming_its_variable(variable: str, value: str) -> None:
    with pytest.raises(SettingsError, match=variable):
        Settings.from_env({variable: value})


def test_an_identity_provider_is_named_whole_or_not_at_all() -> None:
    with pytest.raises(SettingsError, match="RENATURE_OIDC_AUDIENCE"):
        Settings.from_env({"RENATURE_OIDC_ISSUER": "https://id.example"})
    named = {
        "RENATURE_OIDC_ISSUER": "https://id.example",
        "RENATURE_OIDC_AUDIENCE": "table",
        "RENATURE_OIDC_JWKS": "https://id.example/jwks",
    }
    assert Settings.from_env(named).identity.configured


def test_credentials_go_into_the_url_and_never_into_a_repr_or_an_error(tmp_path: Path) -> None:
    env = {"RENATURE_REDIS_USER": "rules", "RENATURE_REDIS_PASSWORD": "s3cret"}
    settings = Settings.from_env(env, redis_url="redis://db:6379/0")  # the flag wins
    assert settings.store.redis_url == "redis://rules:s3cret@db:6379/0"
    assert "s3cret" not in repr(settings)
    secret = tmp_path / "password"
    secret.write_text("from-file\n")
    filed = Settings.from_env({"RENATURE_REDIS_PASSWORD_FILE": str(secret)})
    assert filed.store.redis_url == "redis://:from-file@127.0.0.1:6379/0"
    missing = {"RENATURE_REDIS_PASSWORD_FILE": str(tmp_path / "none")}
    with pytest.raises(SettingsError, match="RENATURE_REDIS_PASSWORD_FILE"):
        Settings.from_env(missing)


def test_fields_and_parts_are_changed_by_name() -> None:
    limits = RateLimits(create="1/minute")
    settings = Settings.of(redis_url="redis://elsewhere/0", consumer="c", limits=limits)
    assert (settings.store.redis_url, settings.consumers.consumer) == ("redis://elsewhere/0", "c")
    assert settings.limits == limits
    assert settings.with_(enabled=False).limits == dataclasses.replace(limits, enabled=False)
    with pytest.raises(TypeError, match="no part or field named 'colour'"):
        settings.with_(colour="green")


def test_a_child_process_gets_fields_through_their_variables() -> None:
    env = variables(trusted_proxies="10.0.0.0/8", enabled=False, cors_origins=("https://a.b",))
    assert env == {
        "RENATURE_TRUSTED_PROXIES": "10.0.0.0/8",
        "RENATURE_RATE_LIMITS": "off",
        "RENATURE_CORS_ORIGINS": "https://a.b",
    }
    child = Settings.from_env(env)
    assert (child.front_door.trusted_proxies, child.limits.enabled) == ("10.0.0.0/8", False)
    assert child.frontends.cors_origins == ("https://a.b",)


def test_a_service_started_with_a_bad_variable_says_which_and_starts_nothing() -> None:
    from typer.testing import CliRunner

    from gameserver.cli import app as cli

    bad = {"RENATURE_DURABILITY": "sometimes"}
    result = CliRunner().invoke(cli, ["serve", "rules"], env=bad)
    assert result.exit_code == 2
    assert "RENATURE_DURABILITY='sometimes': expected one of always, replica, everysec" in " ".join(
        result.output.split()
    )


def test_what_the_deployments_set_is_declared_and_valid() -> None:
    """The Kubernetes ConfigMap and the compose file set only declared variables, with values
    the settings take."""
    import yaml

    declared_names = {row.variable for row in settings_table.rows()}
    infra = ROOT / "infra"
    config_map = next(
        doc
        for doc in yaml.safe_load_all((infra / "k8s" / "services.yaml").read_text())
        if doc and doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "renature-env"
    )["data"]
    compose = yaml.safe_load((infra / "docker-compose.yml").read_text())
    services = [service.get("environment", {}) for service in compose["services"].values()]
    for env in (config_map, *services):
        env = {k: str(v) for k, v in env.items() if k.startswith(("RENATURE_", "REDIS_URL"))}
        env = {k: v for k, v in env.items() if "${" not in v}  # passwords from infra/.env
        assert set(env) <= declared_names, set(env) - declared_names
        Settings.from_env(env)
    assert Settings.from_env(config_map).front_door.trusted_proxies == "10.0.0.0/8"
