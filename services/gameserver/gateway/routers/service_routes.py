"""The service's own endpoints (health)."""

from __future__ import annotations

from fastapi import APIRouter

from gameserver.gateway.dependencies import GatewayDep
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.openapi import errors

router = APIRouter(tags=["service"])


@router.get("/healthz", responses=errors(503))
async def health(gateway: GatewayDep) -> dict[str, str]:
    """Ready when Redis answers (used by process supervisors and the e2e tests)."""
    try:
        await gateway.redis.ping()
    except Exception as error:
        raise ApiError(503, "redis_unavailable", "Redis does not answer.") from error
    return {"status": "ok"}
