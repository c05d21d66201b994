"""The service's own endpoints (health, the public keys that sign game records)."""

from __future__ import annotations

from fastapi import APIRouter

from gameserver.gateway.dependencies import GatewayDep
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.openapi import body, errors
from gameserver.gateway.schemas import MsgspecResponse
from gameserver.runtime.signing import KeySet

router = APIRouter(tags=["service"])


@router.get("/healthz", responses=errors(503))
async def health(gateway: GatewayDep) -> dict[str, str]:
    """Ready when Redis answers (used by process supervisors and the e2e tests)."""
    try:
        await gateway.ping()
    except Exception as error:
        raise ApiError(503, "redis_unavailable", "Redis does not answer.") from error
    return {"status": "ok"}


@router.get(
    "/.well-known/renature-keys.json",
    response_class=MsgspecResponse,
    responses={**body(KeySet, "Every key the server signs game records with"), **errors(503)},
)
async def signing_keys(gateway: GatewayDep) -> MsgspecResponse:
    """The Ed25519 public keys of the rules service, old ones included (a record sealed
    before a rotation still verifies): give this document, or one key of it, to
    ``renature audit --events FILE --key KEY`` to prove a file came from this server."""
    return MsgspecResponse(await gateway.signing_keys())
