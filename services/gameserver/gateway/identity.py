"""A frontend's own accounts: seats bound to a user of an identity provider (OIDC/JWT).

A deployment whose frontend signs its users in may name its identity provider: the issuer
(``RENATURE_OIDC_ISSUER``), the audience its tokens are for (``RENATURE_OIDC_AUDIENCE``) and its
key set (``RENATURE_OIDC_JWKS``: an ``https://`` JWKS URL, fetched and cached by PyJWT, or a
JWKS file). A join that carries the user's signed token (``id_token``) binds the seat to that
user; the same user reclaims the seat from any device with a fresh token of theirs.

A token is accepted only when its signature verifies under a key of the set (asymmetric
algorithms only: never ``none`` or a shared secret), its issuer and audience are the configured
ones, it has not expired (``exp`` is required) and it names a subject (``sub``). What is kept
of it is a digest of issuer and subject; the token itself is neither stored nor logged, and a
refusal says why in words without repeating it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Final

import jwt
from starlette.concurrency import run_in_threadpool

from gameplatform.interface import JsonValue
from gameserver.gateway.http_errors import ApiError
from gameserver.runtime.settings_parts import Identity

ALGORITHMS: Final = ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"]
LEEWAY_S: Final = 30
"""Clock skew allowed between the provider and the gateway."""


class IdentityProvider:
    """Verifies a user's signed token and names the user by a digest of issuer and subject."""

    def __init__(self, issuer: str, audience: str, jwks: str) -> None:
        if not (issuer and audience and jwks):
            raise ValueError("an identity provider needs an issuer, an audience and a JWKS")
        self.issuer = issuer
        self.audience = audience
        self._client: jwt.PyJWKClient | None = None
        self._keys: jwt.PyJWKSet | None = None
        if jwks.startswith(("https://", "http://")):
            self._client = jwt.PyJWKClient(jwks, cache_keys=True, lifespan=300, timeout=5)
        else:
            self._keys = jwt.PyJWKSet.from_json(Path(jwks).read_text(encoding="utf-8"))

    @classmethod
    def of(cls, identity: Identity) -> IdentityProvider | None:
        """The provider the settings name, or None where they name none."""
        if not identity.configured:
            return None
        return cls(identity.oidc_issuer, identity.oidc_audience, identity.oidc_jwks)

    async def user(self, token: str) -> str:
        """The digest naming the token's user; 401 ``invalid_identity`` (in words) otherwise."""
        try:
            key = await self._signing_key(token)
            claims: dict[str, JsonValue] = jwt.decode(
                token,
                key,
                algorithms=ALGORITHMS,
                audience=self.audience,
                issuer=self.issuer,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as error:
            raise ApiError(401, "invalid_identity", _reason(error)) from None
        return user_digest(self.issuer, str(claims["sub"]))

    async def _signing_key(self, token: str) -> Any:
        if self._client is not None:  # the URL's keys, fetched off the event loop and cached
            client = self._client
            found = await run_in_threadpool(client.get_signing_key_from_jwt, token)
            return found.key
        assert self._keys is not None
        kid = jwt.get_unverified_header(token).get("kid")
        for key in self._keys.keys:
            if kid is None or key.key_id == kid:
                return key.key
        raise jwt.PyJWKError("no key of the set has this token's key id")


def user_digest(issuer: str, subject: str) -> str:
    """What is stored of a user: SHA-256 of the issuer and the subject."""
    return hashlib.sha256(f"renature/identity\0{issuer}\0{subject}".encode()).hexdigest()


def _reason(error: jwt.PyJWTError) -> str:
    """Why a token was refused, in words that never repeat the token."""
    reasons: list[tuple[type[jwt.PyJWTError], str]] = [
        (jwt.ExpiredSignatureError, "The identity token has expired; sign in again."),
        (jwt.InvalidIssuerError, "The identity token was issued by another issuer."),
        (jwt.InvalidAudienceError, "The identity token is meant for another audience."),
        (jwt.ImmatureSignatureError, "The identity token is not valid yet."),
        (
            jwt.MissingRequiredClaimError,
            "The identity token lacks a required claim (exp, iss, aud or sub).",
        ),
        (jwt.InvalidSignatureError, "The identity token's signature does not verify."),
        (
            jwt.InvalidAlgorithmError,
            "The identity token is signed with an algorithm not accepted here.",
        ),
    ]
    for kind, words in reasons:
        if isinstance(error, kind):
            return words
    return "The identity token cannot be verified (malformed, or signed by an unknown key)."
