"""``renature keys new --out FILE``: a new Ed25519 signing key, private to its owner, whose id
is printed and never the key; a file that exists is never overwritten (refused, or kept with
``--keep``); ``--public-out`` writes the public key that ``renature audit --key`` reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from gameserver.cli import app
from gameserver.runtime import signing
from gameserver.runtime.supervisor import PrivateRedis, SupervisorError


def keys(*args: str | Path) -> Result:
    return CliRunner().invoke(app, ["keys", "new", *(str(a) for a in args)])


def test_a_new_key_is_written_privately_and_only_its_id_is_printed(tmp_path: Path) -> None:
    out, public = tmp_path / "keys" / "signing.pem", tmp_path / "signing.pub.pem"
    result = keys("--out", out, "--public-out", public)
    assert result.exit_code == 0, result.output
    assert out.stat().st_mode & 0o777 == 0o600
    key = signing.load_private_key(out)
    kid = signing.key_id(key.public_key())
    assert f"Signing key {kid}" in result.output
    assert "PRIVATE" not in result.output
    assert list(signing.read_public_keys(public.read_bytes())) == [kid]


def test_an_existing_key_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "signing.pem"
    assert keys("--out", out).exit_code == 0
    before = out.read_bytes()
    refused = keys("--out", out)
    assert refused.exit_code == 2
    assert "exists" in refused.output
    assert out.read_bytes() == before
    kept = keys("--out", out, "--keep")
    assert kept.exit_code == 0
    assert out.read_bytes() == before
    kid = signing.key_id(signing.load_private_key(out).public_key())
    assert f"Signing key {kid}" in kept.output


def test_a_file_that_is_no_key_is_refused_and_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "signing.pem"
    out.write_text("not a key\n")
    result = keys("--out", out, "--keep")
    assert result.exit_code == 2
    assert "Cannot write or read the key" in result.output
    assert out.read_text() == "not a key\n"


def test_serve_all_makes_its_key_once_and_names_a_broken_one(tmp_path: Path) -> None:
    stack = PrivateRedis(data_dir=tmp_path / "var" / "redis", port=1, executable="redis-server")
    kid = stack.signing_key_id()
    assert stack.signing_key_file == tmp_path / "var" / "signing-key.pem"
    assert stack.signing_key_file.stat().st_mode & 0o777 == 0o600
    assert stack.signing_key_id() == kid  # kept, not made again
    stack.signing_key_file.write_text("not a key\n")
    with pytest.raises(SupervisorError, match="holds no usable signing key"):
        stack.signing_key_id()
    assert stack.signing_key_file.read_text() == "not a key\n"
