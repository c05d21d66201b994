"""What docs/security.md says a seal is, statement by statement (`gameserver.runtime.signing`).

A seal signs the game id, the number of events and the SHA-256 of each event's stored bytes,
after the context string ``renature-seal/1``; a key's id is the first 16 hex digits of the
SHA-256 of its raw public key; ``--key`` takes the published document or one PEM key; the
verdict names the first event that differs or is missing, and tells later events apart as
unsigned.
"""

from __future__ import annotations

import base64
import hashlib

import msgspec
import pytest
from cryptography.hazmat.primitives import serialization
from msgspec.structs import replace

from gameserver.runtime import signing

LINES = [b'{"type":"GameCreated","version":1}', b'{"version":2}', b'{"version":3}']


def test_a_seal_signs_the_game_its_event_count_and_each_events_digest_after_its_context() -> None:
    key = signing.new_key()
    seal = signing.sign(key, "g1", LINES)
    assert (seal.game_id, seal.events) == ("g1", 3)
    assert seal.digests == [hashlib.sha256(line).hexdigest() for line in LINES]
    body = msgspec.json.encode(["g1", 3, seal.digests])
    signature = base64.b64decode(seal.signature)
    key.public_key().verify(signature, b"renature-seal/1\n" + body)  # raises if not
    keys = {seal.key_id: key.public_key()}
    assert signing.check_seal(seal, keys) is None
    # a signature of the same body without the context is no seal
    bare = replace(seal, signature=base64.b64encode(key.sign(body)).decode())
    assert "does not verify" in (signing.check_seal(bare, keys) or "")
    for forged in (replace(seal, game_id="g2"), replace(seal, events=2, digests=seal.digests[:2])):
        assert "does not verify" in (signing.check_seal(forged, keys) or "")
    assert "do not match" in (signing.check_seal(replace(seal, events=4), keys) or "")


def test_a_key_id_is_the_start_of_the_sha256_of_the_raw_public_key() -> None:
    public = signing.new_key().public_key()
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert signing.key_id(public) == hashlib.sha256(raw).hexdigest()[:16]
    entry = signing.public_key_entry(public)
    assert base64.b64decode(entry.public_key) == raw
    assert entry.algorithm == "Ed25519"


def test_the_key_is_the_published_document_or_one_pem_public_key() -> None:
    old, new = signing.new_key().public_key(), signing.new_key().public_key()
    document = signing.KeySet([signing.public_key_entry(old), signing.public_key_entry(new)])
    keys = signing.read_public_keys(msgspec.json.encode(document))
    assert set(keys) == {signing.key_id(old), signing.key_id(new)}
    assert set(signing.read_public_keys(signing.public_pem(new))) == {signing.key_id(new)}
    lying = signing.PublicKey(signing.key_id(old), signing.public_key_entry(new).public_key)
    assert signing.read_public_keys(msgspec.json.encode(signing.KeySet([lying]))) == {}
    for wrong in (b"", b"not a key", b'{"keys": 3}', signing.private_pem(signing.new_key())):
        with pytest.raises(ValueError, match=r"PEM|public key"):
            signing.read_public_keys(wrong)


def test_the_verdict_names_the_first_event_that_differs_or_is_missing() -> None:
    key = signing.new_key()
    seal = signing.sign(key, "g1", LINES)
    keys = {seal.key_id: key.public_key()}
    signed = signing.verdict(seal, keys, LINES)
    assert (signed.status, signed.key_id, signed.signed_events) == ("signed", seal.key_id, 3)
    later = signing.verdict(seal, keys, [*LINES, b'{"version":4}'])
    assert later.status == "signed"
    assert "events 4 to 4 came later and are not signed" in later.message
    changed = signing.verdict(seal, keys, [LINES[0], b'{"version": 2}', LINES[2]])
    assert (changed.status, changed.first_difference) == ("differs", 2)
    assert changed.message == "event 2 differs from what the server signed"
    cut = signing.verdict(seal, keys, LINES[:1])
    assert (cut.status, cut.first_difference) == ("differs", 2)
    assert cut.message.startswith("event 2 is missing")
    assert signing.verdict(None, keys, LINES).status == "not_signed"
    other = signing.verdict(seal, {}, LINES)
    assert (other.status, other.key_id) == ("not_signed", seal.key_id)
    assert "not among the keys given" in other.message


def test_a_seal_line_with_unbounded_values_is_no_seal() -> None:
    """A seal is read from files others make, and its key id appears in messages: each of its
    values is bounded, so a seal of megabytes is refused as it is decoded."""
    seal = signing.sign(signing.new_key(), "g1", LINES)
    line = msgspec.json.encode(signing.SealLine(seal))
    assert msgspec.json.decode(line, type=signing.SealLine).seal == seal
    for field, value in (
        ("key_id", "k" * 1_000_000),
        ("game_id", "g" * 65),
        ("digests", ["0" * 63]),
        ("signature", "s" * 129),
        ("events", -1),
    ):
        bloated = msgspec.json.encode({"seal": {**msgspec.to_builtins(seal), field: value}})
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(bloated, type=signing.SealLine)
