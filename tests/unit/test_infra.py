"""The deployment would pass review: every Kubernetes manifest is valid against the
Kubernetes schemas (kubernetes-validate, which ships them: no network), and the manifests, the
compose file, redis.conf, the ACL file and the Dockerfile hold what the security model says
(docs/security.md).

The attacks on the manifests as they once were: no NetworkPolicy, REDIS_URL (with the
password to be) in a ConfigMap, no resource requests or limits, only the gateway probed (on
/docs, 200 with Redis down), a StatefulSet pointed at a Service that is not headless, images
tagged latest, Redis bound to 0.0.0.0 with protected-mode off and no password.
"""

from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from typer.testing import CliRunner

from gameserver.cli import app
from gameserver.runtime.supervisor import STACK

INFRA = Path(__file__).resolve().parents[2] / "infra"
K8S_VERSION = "1.30.0"
SERVICES = STACK  # deployed as `serve all` runs them: the board and score projectors in one


def manifests() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted((INFRA / "k8s").glob("*.yaml")):
        out += [(path.name, doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return out


def by_kind(kind: str) -> list[dict[str, Any]]:
    return [doc for _, doc in manifests() if doc["kind"] == kind]


def named(kind: str, name: str) -> dict[str, Any]:
    (doc,) = [d for d in by_kind(kind) if d["metadata"]["name"] == name]
    return doc


def workloads() -> list[dict[str, Any]]:
    return by_kind("Deployment") + by_kind("StatefulSet")


def containers(workload: dict[str, Any]) -> list[dict[str, Any]]:
    return list(workload["spec"]["template"]["spec"]["containers"])


@pytest.mark.parametrize(
    ("name", "doc"), manifests(), ids=lambda v: v if isinstance(v, str) else v["metadata"]["name"]
)
def test_every_manifest_is_valid_against_the_kubernetes_schemas(
    name: str, doc: dict[str, Any]
) -> None:
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_the_validator_really_refuses_a_wrong_manifest() -> None:
    """A misspelt field and a wrong type are caught (the schemas are there, offline)."""
    deployment = copy.deepcopy(named("Deployment", "renature-rules"))
    deployment["spec"]["template"]["spec"]["containers"][0]["resorces"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)
    deployment = copy.deepcopy(named("Deployment", "renature-rules"))
    deployment["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)


def test_every_service_and_redis_are_deployed() -> None:
    deployed = {d["metadata"]["name"] for d in by_kind("Deployment")}
    assert deployed == {f"renature-{service}" for service in (*SERVICES, "proxy")}
    assert {d["metadata"]["name"] for d in by_kind("StatefulSet")} == {"renature-redis"}


@pytest.mark.parametrize("workload", workloads(), ids=lambda w: w["metadata"]["name"])
def test_every_container_has_probes_resources_a_pinned_image_and_no_privileges(
    workload: dict[str, Any],
) -> None:
    pod = workload["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True
    for container in containers(workload):
        assert "livenessProbe" in container
        resources = container["resources"]
        assert set(resources["requests"]) == {"cpu", "memory"}
        assert set(resources["limits"]) == {"cpu", "memory"}
        image = container["image"]
        repository, _, tag = image.rpartition(":")
        assert repository
        assert tag
        assert tag != "latest"
        assert re.search(r"\d+\.\d+\.\d+", tag), f"{image} is not pinned to a release"
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False
        assert context["readOnlyRootFilesystem"] is True
        assert context["capabilities"]["drop"] == ["ALL"]


def test_the_gateway_is_ready_only_when_redis_answers_and_workers_are_probed() -> None:
    (gateway,) = containers(named("Deployment", "renature-gateway"))
    assert gateway["readinessProbe"]["httpGet"]["path"] == "/healthz"
    for service in SERVICES[:-1]:
        (worker,) = containers(named("Deployment", f"renature-{service}"))
        command = worker["livenessProbe"]["exec"]["command"]
        assert command == ["python", "-m", "gameserver.runtime.probe", "live", service]
    from gameserver.runtime.probe import MAX_IDLE_S
    from gameserver.runtime.supervisor import SERVICES as RUNNABLE

    assert set(MAX_IDLE_S) == set(RUNNABLE) - {"gateway"}  # the projectors apart too


def test_the_redis_statefulset_is_governed_by_a_headless_service() -> None:
    redis = named("StatefulSet", "renature-redis")
    service = named("Service", redis["spec"]["serviceName"])
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == redis["spec"]["selector"]["matchLabels"]


def test_the_redis_passwords_live_in_a_secret_only(tmp_path: Path) -> None:
    env_map = named("ConfigMap", "renature-env")["data"]
    assert not any("PASSWORD" in key for key in env_map)
    assert "@" not in env_map["REDIS_URL"]  # no credentials in the URL
    assert not by_kind("Secret")  # none committed: applying the manifests wipes nothing
    secret = {"stringData": dict.fromkeys(created_secret(tmp_path))}
    for workload in workloads():
        for container in containers(workload):
            for variable in container.get("env", []):
                if "PASSWORD" in variable["name"]:
                    assert "value" not in variable
                    ref = variable["valueFrom"]["secretKeyRef"]
                    assert ref["name"] == "renature-redis-auth"
                    assert ref["key"] in secret["stringData"]
    for service in SERVICES:
        (container,) = containers(named("Deployment", f"renature-{service}"))
        env = {v["name"]: v for v in container["env"]}
        assert env["RENATURE_REDIS_USER"]["value"] == service
        key = env["RENATURE_REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]["key"]
        assert key == f"{service.upper()}_PASSWORD"


def created_secret(tmp: Path) -> dict[str, str]:
    """What infra/k8s/create-secrets.sh hands kubectl (a stand-in kubectl records it)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "kubectl"
    fake.write_text(
        '#!/bin/sh\nprintf "%s\\n" "$@" > "$RECORD.$4.args"\n'
        'for a in "$@"; do case "$a" in --from-env-file=*) cp "${a#*=}" "$RECORD.env";;\n'
        '  --from-file=*) cp "${a#*=signing.pem=}" "$RECORD.pem";; esac; done\n'
    )
    fake.chmod(0o755)
    record = tmp / "record"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "RECORD": str(record)}
    script = INFRA / "k8s" / "create-secrets.sh"
    subprocess.run(["sh", str(script), "-n", "games"], env=env, check=True, timeout=30)
    args = (tmp / "record.renature-redis-auth.args").read_text().split()
    values = dict(line.split("=", 1) for line in (tmp / "record.env").read_text().split())
    assert args[:4] == ["create", "secret", "generic", "renature-redis-auth"]
    assert args[-2:] == ["-n", "games"]
    signing = (tmp / "record.renature-signing-key.args").read_text().split()
    assert signing[-2:] == ["-n", "games"]
    assert b"BEGIN PRIVATE KEY" in (tmp / "record.pem").read_bytes()  # an Ed25519 key
    assert all(re.fullmatch(r"[0-9a-f]{64}", value) for value in values.values())
    assert not any(value in " ".join(args) for value in values.values())  # never on argv
    return values


def test_the_secrets_are_generated_once_never_applied_from_a_file(tmp_path: Path) -> None:
    placeholders = re.findall(r"@([A-Z_]+_PASSWORD)@", (INFRA / "redis" / "users.acl").read_text())
    values = created_secret(tmp_path)
    assert set(values) == set(placeholders)
    assert len(set(values.values())) == len(values)  # one password per user
    probes = (INFRA / "k8s" / "redis.yaml").read_text() + (INFRA / "docker-compose.yml").read_text()
    assert "redis-cli" in probes
    assert "--pass" not in probes  # probe passwords come from REDISCLI_AUTH, not argv
    assert " -a " not in probes


def test_the_signing_key_is_a_secret_mounted_into_the_rules_service_alone(
    tmp_path: Path,
) -> None:
    """The Ed25519 key that seals game records: created once by create-secrets.sh (an Ed25519
    private key, never on a command line), in no manifest (applying them cannot replace or
    wipe it), mounted read-only (0400) into the rules service, the one that signs, and into
    no other workload; the gateway publishes the public keys from Redis."""
    created_secret(tmp_path)
    key = (tmp_path / "record.pem").read_bytes()

    assert isinstance(load_pem_private_key(key, password=None), Ed25519PrivateKey)
    args = (tmp_path / "record.renature-signing-key.args").read_text().split()
    assert args[:4] == ["create", "secret", "generic", "renature-signing-key"]
    assert not any("PRIVATE" in arg for arg in args)  # the key went through a file
    assert not by_kind("Secret")
    mounting = []
    for workload in workloads():
        spec = workload["spec"]["template"]["spec"]
        volumes = {
            v["name"]: v for v in spec.get("volumes", []) if v.get("secret", {}).get("secretName")
        }
        for name, volume in volumes.items():
            if volume["secret"]["secretName"] == "renature-signing-key":
                mounting.append(workload["metadata"]["name"])
                assert volume["secret"]["defaultMode"] == 0o400
                (container,) = containers(workload)
                (mount,) = [m for m in container["volumeMounts"] if m["name"] == name]
                assert mount["readOnly"] is True
                env = {v["name"]: v.get("value") for v in container["env"]}
                assert env["RENATURE_SIGNING_KEY_FILE"] == f"{mount['mountPath']}/signing.pem"
        for container in containers(workload):
            named_env = {v["name"] for v in container.get("env", [])}
            if workload["metadata"]["name"] != "renature-rules":
                assert "RENATURE_SIGNING_KEY_FILE" not in named_env
    assert mounting == ["renature-rules"]
    assert "RENATURE_SIGNING_KEY_FILE" not in named("ConfigMap", "renature-env")["data"]


def test_the_signing_key_is_rotated_by_deleting_its_secret_and_running_the_script_again(
    tmp_path: Path,
) -> None:
    """With the Redis passwords' Secret in place (kubectl refuses it: AlreadyExists), running
    create-secrets.sh again leaves it and creates the signing key's; any other refusal fails."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "kubectl"
    fake.write_text(
        '#!/bin/sh\nif [ "$4" = "$EXISTS" ]; then\n'
        '  echo "Error from server ($REASON): secrets \\"$4\\" already exists" >&2; exit 1; fi\n'
        'echo "$4" >> "$RECORD"\n'
    )
    fake.chmod(0o755)
    record = tmp_path / "record"
    script = INFRA / "k8s" / "create-secrets.sh"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "RECORD": str(record)}
    again = {**env, "EXISTS": "renature-redis-auth", "REASON": "AlreadyExists"}
    run = ["sh", str(script)]
    done = subprocess.run(run, env=again, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert "renature-redis-auth exists: left as it is" in done.stderr
    assert record.read_text().split() == ["renature-signing-key"]
    record.unlink()
    denied = {**env, "EXISTS": "renature-redis-auth", "REASON": "Forbidden"}
    done = subprocess.run(run, env=denied, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 1
    assert "Forbidden" in done.stderr
    assert not record.exists()


def test_network_policies_deny_by_default_and_open_redis_to_renature_pods_only() -> None:
    policies = {p["metadata"]["name"]: p["spec"] for p in by_kind("NetworkPolicy")}
    deny = policies["renature-default-deny"]
    assert deny["podSelector"] == {}
    assert set(deny["policyTypes"]) == {"Ingress", "Egress"}
    assert "ingress" not in deny
    assert "egress" not in deny
    redis = policies["renature-redis-ingress"]
    assert redis["podSelector"]["matchLabels"] == {"app": "renature-redis"}
    (rule,) = redis["ingress"]
    assert rule["from"] == [{"podSelector": {"matchLabels": {"renature/redis-client": "true"}}}]
    assert rule["ports"] == [{"protocol": "TCP", "port": 6379}]
    for service in SERVICES:
        labels = named("Deployment", f"renature-{service}")["spec"]["template"]["metadata"]
        assert labels["labels"]["renature/redis-client"] == "true"
    (gateway,) = policies["renature-gateway-ingress"]["ingress"]
    assert gateway["ports"] == [{"protocol": "TCP", "port": 8000}]
    assert gateway["from"] == [{"podSelector": {"matchLabels": {"app": "renature-proxy"}}}]


def test_redis_runs_the_reviewed_configuration_with_the_acl_file() -> None:
    conf = named("ConfigMap", "renature-redis-conf")["data"]["redis.conf"]
    assert conf == (INFRA / "redis.conf").read_text()
    acl = named("ConfigMap", "renature-redis-acl")["data"]
    assert acl["users.acl"] == (INFRA / "redis" / "users.acl").read_text()
    assert acl["render-acl.sh"] == (INFRA / "redis" / "render-acl.sh").read_text()
    (redis,) = containers(named("StatefulSet", "renature-redis"))
    command = redis["command"]
    assert command[:4] == [
        "sh",
        "/etc/redis-acl/render-acl.sh",
        "/etc/redis-acl/users.acl",
        "/run/redis/users.acl",
    ]
    assert command[command.index("--bind") + 1] == "$(POD_IP)"  # its own address only
    pod = named("StatefulSet", "renature-redis")["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["run"]["emptyDir"]["medium"] == "Memory"  # rendered passwords never on disk


def conf_lines(path: Path) -> dict[str, str]:
    lines = [line.split(None, 1) for line in path.read_text().splitlines()]
    settings = [words for words in lines if words and not words[0].startswith("#")]
    return {words[0]: words[1] if len(words) > 1 else "" for words in settings}


def test_redis_conf_is_private_protected_and_durable() -> None:
    conf = conf_lines(INFRA / "redis.conf")
    assert "0.0.0.0" not in conf["bind"]
    assert conf["bind"].split()[0] == "127.0.0.1"
    assert conf["protected-mode"] == "yes"
    assert conf["aclfile"] == "/run/redis/users.acl"
    assert conf["appendonly"] == "yes"
    assert conf["appendfsync"] == "always"
    assert conf["maxmemory-policy"] == "noeviction"


def test_the_acl_file_turns_the_default_user_off_and_keeps_seeds_to_the_rules_service() -> None:
    text = (INFRA / "redis" / "users.acl").read_text()
    users = {line.split()[1]: line for line in text.splitlines() if line.startswith("user ")}
    assert users["default"].startswith("user default off")
    assert set(users) >= {"default", *SERVICES, "auditor", "admin"}
    seeds = "rn:{p*}:seed:*"
    readers = {
        name
        for name, line in users.items()
        if re.search(r"(^|\s|\()~" + re.escape(seeds), line) or f"%R~{seeds}" in line
    }
    assert readers == {"rules"}
    for name, line in users.items():
        if name not in ("default", "admin"):
            assert "resetkeys" in line
            assert "-@all" in line
            assert ">@" + name.upper() + "_PASSWORD@" in line
            assert "~*" not in line.replace("~rn", "")


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((INFRA / "docker-compose.yml").read_text()))


def test_the_compose_file_has_healthchecks_pinned_images_and_a_private_redis() -> None:
    spec = compose()
    services = spec["services"]
    assert set(services) == {"redis", *SERVICES, "proxy", "signing-key"}
    for name, service in services.items():
        if service.get("restart") != "no":  # a one-shot step is not probed: it exits
            test = service["healthcheck"]["test"]
            assert test[0] in ("CMD", "CMD-SHELL")
        image = service["image"]
        assert not image.endswith(":latest")
        assert re.search(r":\d+\.\d+\.\d+", image), image
        assert service.get("read_only") is True, name
        assert "no-new-privileges:true" in service["security_opt"]
    redis = services["redis"]
    assert "ports" not in redis  # never published
    assert redis["networks"] == {"backend": {"ipv4_address": "172.30.0.10"}}
    assert spec["networks"]["backend"]["internal"] is True
    command = redis["command"]
    assert command[command.index("--bind") + 1] == "172.30.0.10"
    for name in SERVICES:
        service = services[name]
        env = service["environment"]
        assert env["RENATURE_REDIS_USER"] == name
        assert re.fullmatch(r"\$\{RENATURE_[A-Z]+_PASSWORD:\?.+\}", env["RENATURE_REDIS_PASSWORD"])
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"
        assert "@" not in env["REDIS_URL"]
    assert services["proxy"]["ports"] == ["8000:8080"]  # the front door, nothing else
    assert [n for n, s in services.items() if "ports" in s] == ["proxy"]


def test_the_compose_stack_signs_with_a_key_made_once_and_mounted_into_the_rules_service_alone(
    tmp_path: Path,
) -> None:
    services = compose()["services"]
    step = services["signing-key"]
    command = step["command"]
    assert command[:3] == ["renature", "keys", "new"]
    assert "--keep" in command
    key_path = command[command.index("--out") + 1]
    folder = str(Path(key_path).parent)
    assert step["volumes"] == [f"signing-key:{folder}"]
    assert step["network_mode"] == "none"
    assert step["restart"] == "no"
    assert step["read_only"] is True
    assert step["cap_drop"] == ["ALL"]
    rules = services["rules"]
    assert rules["environment"]["RENATURE_SIGNING_KEY_FILE"] == key_path
    assert rules["volumes"] == [f"signing-key:{folder}:ro"]
    ran_first = rules["depends_on"]["signing-key"]["condition"]
    assert ran_first == "service_completed_successfully"
    others = [name for name, s in services.items() if name not in ("rules", "signing-key")]
    for name in others:  # no other service holds the private key
        assert "signing-key" not in str(services[name].get("volumes", [])), name
    # The image gives the folder to its unprivileged user (the volume starts with its owner).
    dockerfile = (INFRA / "Dockerfile").read_text()
    assert f"chown 10001 {folder}" in dockerfile
    assert f"chmod 0700 {folder}" in dockerfile
    # The step's command: the key made once, then kept (its id unchanged) at every start.
    out = tmp_path / "keys" / "signing.pem"
    args = [*command[1:3], "--out", str(out), "--keep"]
    made, again = CliRunner().invoke(app, args), CliRunner().invoke(app, args)
    assert made.exit_code == again.exit_code == 0, (made.output, again.output)
    assert made.output == again.output
    assert "Signing key" in made.output
    assert out.stat().st_mode & 0o777 == 0o600


def test_the_dockerfile_pins_its_base_image_and_runs_unprivileged() -> None:
    text = (INFRA / "Dockerfile").read_text()
    bases = re.findall(r"^FROM (\S+)", text, flags=re.MULTILINE)
    assert bases
    for base in bases:
        assert re.search(r":\d+\.\d+\.\d+", base), base
    assert re.search(r"uv==\d+\.\d+\.\d+", text)
    assert re.search(r"^USER 10001$", text, flags=re.MULTILINE)


def test_the_front_door_is_nginx_with_its_bounds_and_the_gateway_trusts_it_alone() -> None:
    """Slow and huge requests are turned away in front of the gateway, and the
    gateway learns the real client's address from that proxy only."""
    text = (INFRA / "nginx" / "nginx.conf").read_text()
    for bound in (
        "client_header_timeout 10s;",
        "client_body_timeout 30s;",
        "large_client_header_buffers 4 16k;",
        "client_max_body_size 4m;",
        "limit_conn per_address 64;",
        "proxy_set_header X-Forwarded-For $remote_addr;",  # overwritten, never passed on
        'proxy_set_header Forwarded "";',
    ):
        assert bound in text, bound
    log_format = text[text.index("log_format") : text.index("access_log")]
    assert "$request " not in log_format
    assert "$args" not in log_format  # the live channel's ?token= never reaches a log
    assert "$request_uri" not in log_format
    # compose: the very file, the proxy's address trusted by the gateway
    services = compose()["services"]
    assert "./nginx/nginx.conf:/etc/nginx/nginx.conf:ro" in services["proxy"]["volumes"]
    address = services["proxy"]["networks"]["frontend"]["ipv4_address"]
    assert services["gateway"]["environment"]["RENATURE_TRUSTED_PROXIES"] == address
    assert "renature-gateway" in services["gateway"]["networks"]["frontend"]["aliases"]
    # Kubernetes: the same file in a ConfigMap, mounted by the proxy; the gateway trusts the
    # pod network, which only the proxy may reach it from (network policies above)
    assert named("ConfigMap", "renature-proxy-conf")["data"]["nginx.conf"] == text
    (proxy,) = containers(named("Deployment", "renature-proxy"))
    assert {
        "name": "conf",
        "mountPath": "/etc/nginx/nginx.conf",
        "subPath": "nginx.conf",
        "readOnly": True,
    } in proxy["volumeMounts"]
    assert named("ConfigMap", "renature-env")["data"]["RENATURE_TRUSTED_PROXIES"]
    service = named("Service", "renature-proxy")["spec"]
    assert service["externalTrafficPolicy"] == "Local"
    assert named("Service", "renature-gateway")["spec"]["ports"][0]["port"] == 8000


def test_the_live_channels_ping_well_within_the_proxy_s_read_timeout() -> None:
    """An idle live channel through nginx is kept by the gateway's pings: the WebSocket's
    (uvicorn's ``ws_ping_interval``, which `renature serve gateway` leaves at its default)
    and the event stream's comment pings each come long before ``proxy_read_timeout`` ends
    an upstream that stays silent (tests/integration/test_front_door_nginx.py idles one)."""
    import uvicorn

    from gameserver.gateway.front_door import uvicorn_options
    from gameserver.gateway.routers.sse_routes import PING_S
    from gameserver.runtime.settings_parts import FrontDoor

    text = (INFRA / "nginx" / "nginx.conf").read_text()
    found = re.search(r"proxy_read_timeout (\d+)s;", text)
    assert found is not None
    read_timeout = int(found.group(1))
    assert "ws_ping_interval" not in uvicorn_options(FrontDoor())
    ping = uvicorn.Config(app="gameserver.gateway.server:app").ws_ping_interval
    assert ping is not None
    assert 0 < ping * 3 <= read_timeout
    assert 0 < PING_S * 3 <= read_timeout
    assert "proxy_set_header Upgrade $http_upgrade;" in text
    assert "proxy_set_header Connection $connection_upgrade;" in text
