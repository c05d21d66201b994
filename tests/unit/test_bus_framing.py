"""Commands and replies framed as FastStream frames them (`bus.framed`): byte for byte what
FastStream's ``BinaryMessageFormatV1.encode`` makes of the same body and headers, and read back
by its ``parse`` (what the rules service's reader and the sender's listener use)."""

from __future__ import annotations

from faststream.redis.parser.binary import BinaryMessageFormatV1
from hypothesis import given
from hypothesis import strategies as st

from gameserver.runtime import bus

ids = st.text(alphabet="0123456789abcdef-", min_size=0, max_size=40)
channels = st.none() | st.text(alphabet="rnply:shard0123456789abcdef", min_size=1, max_size=60)


@given(body=st.binary(max_size=2_000), correlation_id=ids, reply_to=channels)
async def test_a_frame_is_faststreams_own(
    body: bytes, correlation_id: str, reply_to: str | None
) -> None:
    theirs = await BinaryMessageFormatV1.encode(
        message=body, reply_to=reply_to, headers=None, correlation_id=correlation_id
    )
    assert bus.framed(body, correlation_id, reply_to) == theirs


@given(body=st.binary(max_size=2_000), correlation_id=ids, reply_to=channels)
def test_faststream_reads_a_frame_back(
    body: bytes, correlation_id: str, reply_to: str | None
) -> None:
    data, headers = BinaryMessageFormatV1.parse(bus.framed(body, correlation_id, reply_to))
    assert data == body
    expected = {"correlation_id": correlation_id}
    if reply_to:
        expected["reply_to"] = reply_to
    assert headers == expected
