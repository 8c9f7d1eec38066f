"""Content-Length framing: round trips through arbitrary chunking, every malformed case, resync,
fuzzing, and the async reader/writer over a real socket pair."""
from __future__ import annotations

import json
import socket
from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import dap
from protocol.wire import (
    BadContentLength, BodyNotJson, BodyNotObject, BodyNotUtf8, BodyTooLarge, FrameDecoder, FrameLimits, FramingError,
    HeaderTooLarge, InvalidEnvelope, MalformedHeader, MessageReader, MessageWriter, MissingContentLength,
    UnexpectedEof, encode_message, write_message,
)

GOOD = {"seq": 1, "type": "event", "event": "output", "body": {"output": "ok\n"}}
GOOD_FRAME = encode_message(GOOD)


def frame(body: bytes, header: bytes | None = None) -> bytes:
    return (header if header is not None else b"Content-Length: %d\r\n\r\n" % len(body)) + body


def decode_all(data: bytes, limits: FrameLimits | None = None, chunk: int | None = None) -> list[Any]:
    decoder = FrameDecoder(limits)
    out: list[Any] = []
    step = chunk or max(1, len(data))
    for i in range(0, len(data), step):
        out += decoder.feed(data[i : i + step])
    return out + decoder.feed_eof()


def kinds(items: list[Any]) -> list[Any]:
    return [type(i) if isinstance(i, FramingError) else i for i in items]


# ------------------------------------------------------------------------------ encoding


def test_length_counts_utf8_bytes_not_characters() -> None:
    message = {"seq": 2, "type": "event", "event": "output", "body": {"output": "h\u00e9\U0001f600\u4e2d"}}
    data = encode_message(message)
    header, body = data.split(b"\r\n\r\n", 1)
    assert header == b"Content-Length: %d" % len(body)
    assert len(body) > len(body.decode("utf-8"))  # multibyte characters really are in the body
    assert json.loads(body) == message
    assert decode_all(data) == [message]


def test_lone_surrogates_round_trip_as_escapes() -> None:
    message = {"seq": 1, "type": "event", "event": "output", "body": {"output": "bad \udcff byte"}}
    data = encode_message(message)
    data.decode("utf-8")  # the frame itself is valid UTF-8
    assert decode_all(data) == [message]


def test_encode_accepts_models_and_rejects_what_json_cannot_carry() -> None:
    model = dap.event("exited", {"exitCode": 3}, seq=7)
    assert decode_all(encode_message(model)) == [{"seq": 7, "type": "event", "event": "exited", "body": {"exitCode": 3}}]
    with pytest.raises(ValueError):
        encode_message({"seq": 1, "type": "event", "x": float("nan")})
    with pytest.raises(TypeError):
        encode_message([1, 2])  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ malformed frames

BODY_CASES = [
    (frame(b'{"seq":1,"type":"x","s":"\xff"}'), BodyNotUtf8, 22 + 25),
    (frame(b'{"seq": 1, "type": '), BodyNotJson, None),
    (frame(b'{"seq": NaN, "type": "event"}'), BodyNotJson, None),
    (frame(b"[" * 100_000 + b"]" * 100_000), BodyNotJson, None),
    (frame(b""), BodyNotJson, None),
    (frame(b"[1, 2]"), BodyNotObject, None),
    (frame(b'"text"'), BodyNotObject, None),
    (frame(b"null"), BodyNotObject, None),
    (frame(b'{"seq": 1}'), InvalidEnvelope, None),
    (frame(b'{"type": "request"}'), InvalidEnvelope, None),
    (frame(b'{"seq": true, "type": "request"}'), InvalidEnvelope, None),
    (frame(b'{"seq": "1", "type": "request"}'), InvalidEnvelope, None),
    (frame(b'{"seq": 1, "type": 5}'), InvalidEnvelope, None),
]


@pytest.mark.parametrize(("data", "error", "position"), BODY_CASES, ids=lambda v: getattr(v, "__name__", None))
def test_body_errors_are_recoverable(data: bytes, error: type[FramingError], position: int | None) -> None:
    items = decode_all(GOOD_FRAME + data + GOOD_FRAME)
    assert kinds(items) == [GOOD, error, GOOD]
    err = items[1]
    assert err.recoverable and str(err)
    body_start = len(GOOD_FRAME) + data.index(b"\r\n\r\n") + 4
    assert err.position == (len(GOOD_FRAME) + position if position is not None else body_start) or (
        error is BodyNotJson and body_start <= err.position <= len(GOOD_FRAME) + len(data)
    )


HEADER_CASES = [
    (b"Content-Type: application/json\r\n\r\n{}", MissingContentLength),
    (b"Content-Length: -3\r\n\r\n{}", BadContentLength),
    (b"Content-Length: abc\r\n\r\n{}", BadContentLength),
    (b"Content-Length: 1e3\r\n\r\n{}", BadContentLength),
    (b"Content-Length: \r\n\r\n{}", BadContentLength),
    (b"Content-Length: " + b"9" * 400 + b"\r\n\r\n{}", BodyTooLarge),
    (b"Content-Length: 99999999999999999999999\r\n\r\n{}", BodyTooLarge),
    (b"Content-Length: 1000\r\n\r\n" + b"x" * 1000, BodyTooLarge),
    (b"garbage\r\n\r\n", MalformedHeader),
    (b"Content-Length: 2\r\nno colon here\r\n\r\n{}", MalformedHeader),
    (b"Content-L\xe9ngth: 2\r\n\r\n{}", MalformedHeader),
    (b"X" * 600, HeaderTooLarge),
    (b"Content-Length: 2" + b" " * 600 + b"\r\n\r\n{}", HeaderTooLarge),
]


@pytest.mark.parametrize(("data", "error"), HEADER_CASES, ids=lambda v: getattr(v, "__name__", None))
@pytest.mark.parametrize("chunk", [None, 1, 7])
def test_header_errors_resync_to_the_next_frame(data: bytes, error: type[FramingError], chunk: int | None) -> None:
    limits = FrameLimits(max_header_bytes=512, max_body_bytes=500)
    items = decode_all(GOOD_FRAME + data + GOOD_FRAME, limits, chunk)
    assert kinds(items) == [GOOD, error, GOOD]
    assert items[1].position == len(GOOD_FRAME) and not items[1].recoverable
    assert error.__name__ and str(items[1]).endswith(f"(at byte {len(GOOD_FRAME)})")


def test_resync_finds_a_marker_inside_junk_and_split_across_feeds() -> None:
    body = json.dumps(GOOD).encode()
    lower = b"content-LENGTH: %d\r\n\r\n" % len(body) + body  # the marker is matched in any case
    stream = b"zz\r\n\r\n" + b"garbageContent-Length: 5\r\n\r\nhello" + b"\x00\xff junk\r\n\r\nmore junk " + lower + GOOD_FRAME
    expected = [MalformedHeader, BodyNotJson, MalformedHeader, GOOD, GOOD]
    for chunk in (1, 3, None):  # byte by byte: markers split across feeds
        assert kinds(decode_all(stream, chunk=chunk)) == expected
    # one error per resync, however many bytes are skipped
    items = decode_all(b"nonsense\r\n\r\n" + b"\xfe" * 50_000 + GOOD_FRAME, chunk=4096)
    assert kinds(items) == [MalformedHeader, GOOD]


def test_duplicate_content_length_is_rejected_and_resync_lands_on_the_second_line() -> None:
    data = b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}"
    assert kinds(decode_all(data + GOOD_FRAME)) == [BadContentLength, InvalidEnvelope, GOOD]


def test_accepts_other_headers_and_any_case() -> None:
    body = json.dumps(GOOD).encode()
    data = b"content-type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:  %d \r\n\r\n" % len(body) + body
    assert decode_all(data + data) == [GOOD, GOOD]


@pytest.mark.parametrize("cut", [1, 10, 21, 22, 30, len(GOOD_FRAME) - 1])
def test_eof_mid_frame_is_an_error_and_clean_eof_is_not(cut: int) -> None:
    decoder = FrameDecoder()
    assert decoder.feed(GOOD_FRAME + GOOD_FRAME[:cut]) == [GOOD]
    (err,) = decoder.feed_eof()
    assert isinstance(err, UnexpectedEof) and err.position == len(GOOD_FRAME)
    assert decoder.feed_eof() == []
    assert decode_all(GOOD_FRAME) == [GOOD]
    assert decode_all(b"") == []


def test_eof_while_resyncing_reports_nothing_more() -> None:
    assert kinds(decode_all(b"bad\r\n\r\nstill junk")) == [MalformedHeader]


def test_buffer_stays_bounded_by_the_limits() -> None:
    limits = FrameLimits(max_header_bytes=64, max_body_bytes=128)
    decoder = FrameDecoder(limits)
    for _ in range(200):
        decoder.feed(b"\x00junk-without-a-header" * 10)
        assert decoder.buffered <= limits.max_header_bytes
    decoder.feed(b"Content-Length: 128\r\n\r\n" + b"x" * 100)
    assert decoder.buffered <= limits.max_body_bytes


# ------------------------------------------------------------------------------ property tests

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=15,
)
MESSAGES = st.builds(
    lambda seq, kind, extra: {**extra, "seq": seq, "type": kind},
    st.integers(min_value=-(2**63), max_value=2**63),
    st.sampled_from(["request", "response", "event"]) | st.text(max_size=8),
    st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=5),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=st.lists(MESSAGES, max_size=6), data=st.data())
def test_round_trip_through_arbitrary_chunks(messages: list[dict[str, Any]], data: st.DataObject) -> None:
    stream = b"".join(encode_message(m) for m in messages)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    decoder = FrameDecoder()
    out: list[Any] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)]):
        out += decoder.feed(stream[start:end])
    assert out == messages
    assert decoder.feed_eof() == [] and decoder.buffered == 0


def mutate(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    buf = bytearray(data)
    for where, kind, payload in edits:
        i = where % (len(buf) + 1)
        if kind == 0:
            buf[i:i] = payload
        elif kind == 1:
            del buf[i : i + len(payload) + 1]
        else:
            buf[i : i + len(payload)] = payload
    return bytes(buf)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=st.lists(MESSAGES, min_size=1, max_size=4),
    edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 2), st.binary(min_size=1, max_size=8)), max_size=6),
    noise=st.binary(max_size=300),
    data=st.data(),
)
def test_fuzzed_bytes_only_ever_give_messages_or_typed_errors(
    messages: list[dict[str, Any]], edits: list, noise: bytes, data: st.DataObject
) -> None:
    stream = mutate(noise + b"".join(encode_message(m) for m in messages), edits)
    limits = FrameLimits(max_header_bytes=64, max_body_bytes=256)
    decoder = FrameDecoder(limits)
    chunk = data.draw(st.integers(1, 64))
    out: list[Any] = []
    for i in range(0, len(stream), chunk):
        out += decoder.feed(stream[i : i + chunk])
        assert decoder.buffered <= limits.max_header_bytes + limits.max_body_bytes
    out += decoder.feed_eof()
    for item in out:
        assert isinstance(item, (dict, FramingError))
        if isinstance(item, dict):
            assert isinstance(item["type"], str) and isinstance(item["seq"], int)
        else:
            assert 0 <= item.position <= len(stream) and str(item)
    # whatever happened, the decoder is usable afterwards
    assert decoder.feed(GOOD_FRAME) == [GOOD]


# ------------------------------------------------------------------------------ async over a socket pair


async def socket_pair() -> tuple[SocketStream, SocketStream]:
    a, b = socket.socketpair()
    return await SocketStream.from_socket(a), await SocketStream.from_socket(b)


def test_reader_and_writer_over_a_socket_pair() -> None:
    async def main() -> None:
        left, right = await socket_pair()
        writer, reader = MessageWriter(left, seq=dap.SeqCounter(start=5)), MessageReader(right)
        request = dap.parse_message({"seq": 1, "type": "request", "command": "threads"})
        big = {"seq": 0, "type": "event", "event": "output", "body": {"output": "\u00e9" * 200_000}}
        received: list[dict[str, Any]] = []
        with anyio.fail_after(30):  # a hang guard, not a timing assert
            async with anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(writer.send, dap.event("output", {"output": f"line {i}\n"}))
                tg.start_soon(writer.send, dap.response_for(request, {"threads": [{"id": 1, "name": "main"}]}))
                tg.start_soon(writer.send, big)
                for _ in range(12):
                    received.append(await reader.receive())
            await left.aclose()
            assert [item async for item in reader] == []
        assert [m["seq"] for m in received] == list(range(5, 17))  # numbered in send order
        assert {m["body"]["output"] for m in received if m.get("event") == "output"} == {
            *(f"line {i}\n" for i in range(10)), "\u00e9" * 200_000,
        }
        with pytest.raises(anyio.EndOfStream):
            await reader.receive()
        await right.aclose()

    anyio.run(main)


def test_reader_reports_bad_frames_then_eof_mid_frame() -> None:
    async def main() -> None:
        left, right = await socket_pair()
        reader = MessageReader(right)
        with anyio.fail_after(30):
            await write_message(left, GOOD)
            await left.send(frame(b"[1]") + b"Content-Length: -1\r\n\r\n" + GOOD_FRAME + GOOD_FRAME[:30])
            await left.aclose()
            assert await reader.receive() == GOOD
            with pytest.raises(BodyNotObject):
                await reader.receive()
            rest = [item async for item in reader]
        assert kinds(rest) == [BadContentLength, GOOD, UnexpectedEof]
        assert rest[-1].position == len(GOOD_FRAME) * 2 + len(frame(b"[1]")) + 22
        await right.aclose()

    anyio.run(main)


def test_reader_ends_when_the_raw_peer_socket_closes_mid_frame() -> None:
    async def main() -> None:
        a, b = socket.socketpair()
        right = await SocketStream.from_socket(b)
        a.sendall(GOOD_FRAME[:10])
        a.close()
        with anyio.fail_after(30):
            items = [item async for item in MessageReader(right)]
        assert kinds(items) == [UnexpectedEof]
        await right.aclose()

    anyio.run(main)
