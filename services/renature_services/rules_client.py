"""The one way to send a command to the rules service and await its reply.

```python
reply = await send_command(broker, envelope, timeout=5.0)      # a connected RedisBroker
reply = await send_command(redis_client, envelope, timeout=5.0)  # or a plain redis.asyncio.Redis
```

Both use FastStream's request/reply wire format: the envelope (msgspec JSON) is added to
``COMMAND_STREAM`` in FastStream's binary message format with a ``reply_to`` header naming a
fresh pub/sub channel, to which the caller subscribed *before* publishing; the rules service
publishes the encoded `Reply` there. A reply published while nobody listens is lost, which is
harmless: the outcome is stored under the command id, and sending the same envelope again
(same ``command_id``) returns it without deciding the command twice. That is also what to do
after `CommandTimeout`.
"""

from __future__ import annotations

import asyncio
import uuid

from faststream.redis import RedisBroker
from faststream.redis.parser.binary import BinaryMessageFormatV1
from redis.asyncio import Redis

from renature_services import bus

COMMAND_STREAM_MAXLEN = 100_000
"""The command stream is a queue, not a record (events are the record): keep it bounded."""


class CommandTimeout(TimeoutError):
    """No reply in time. The command may or may not have been applied: resend it with the same
    command id to learn its outcome."""


async def send_command(
    broker_or_redis: RedisBroker | Redis,
    envelope: bus.CommandEnvelope,
    timeout: float = 10.0,
) -> bus.Reply:
    """Publish ``envelope`` to the rules service and return its `Reply`.

    Raises `CommandTimeout` when no reply arrives within ``timeout`` seconds.
    """
    body = bus.encoder.encode(envelope)
    if isinstance(broker_or_redis, RedisBroker):
        try:
            message = await broker_or_redis.request(
                body,
                stream=bus.COMMAND_STREAM,
                maxlen=COMMAND_STREAM_MAXLEN,
                correlation_id=envelope.command_id,
                timeout=timeout,
            )
        except TimeoutError as error:
            raise CommandTimeout(_timeout_message(envelope, timeout)) from error
        return bus.reply_decoder.decode(message.body)
    return await _request_with_redis(broker_or_redis, body, envelope, timeout)


async def _request_with_redis(
    redis: Redis, body: bytes, envelope: bus.CommandEnvelope, timeout: float
) -> bus.Reply:
    """The same request as `RedisBroker.request`, for callers that hold only a Redis client."""
    reply_to = f"rn:reply:{uuid.uuid4().hex}"
    message = await BinaryMessageFormatV1.encode(
        message=body, reply_to=reply_to, headers=None, correlation_id=envelope.command_id
    )
    pubsub = redis.pubsub()
    try:
        await pubsub.subscribe(reply_to)
        await redis.xadd(bus.COMMAND_STREAM, {"__data__": message}, maxlen=COMMAND_STREAM_MAXLEN)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (left := deadline - loop.time()) > 0:
            received = await pubsub.get_message(ignore_subscribe_messages=True, timeout=left)
            if received is not None and received.get("type") == "message":
                data, _headers = BinaryMessageFormatV1.parse(received["data"])
                return bus.reply_decoder.decode(data)
        raise CommandTimeout(_timeout_message(envelope, timeout))
    finally:
        await pubsub.unsubscribe()
        await pubsub.aclose()  # type: ignore[no-untyped-call]


def _timeout_message(envelope: bus.CommandEnvelope, timeout: float) -> str:
    return (
        f"no reply to command {envelope.command_id!r} of game {envelope.game_id!r} within "
        f"{timeout:g} s; resend it with the same command id"
    )
