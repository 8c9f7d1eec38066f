"""Content-Length framing of DAP messages: bytes <-> JSON objects, over anyio byte streams.

A DAP frame is ASCII header lines ending in ``\\r\\n``, an empty line, then a UTF-8 JSON body of
exactly ``Content-Length`` bytes::

    Content-Length: 119\\r\\n
    \\r\\n
    {"seq": 1, "type": "request", ...}

API
---
``encode_message(message) -> bytes``
    One whole frame. ``message`` is a mapping or a pydantic model (dumped with DAP field names,
    ``exclude_none``). Bodies are UTF-8; the length counts bytes, not characters.
``FrameDecoder(limits=FrameLimits())``
    Sync, incremental, never blocks. ``feed(data) -> list[dict | FramingError]`` returns every
    complete message (and every error) the new bytes finish, in stream order;
    ``feed_eof() -> list[FramingError]`` says whether the stream ended mid-frame.
``MessageReader(stream: anyio.abc.ByteReceiveStream, limits=FrameLimits())``
    ``await reader.receive() -> dict`` returns the next message, raises a `FramingError` for a bad
    frame (call ``receive()`` again to go on with the next one) and `anyio.EndOfStream` once the
    stream has ended (after an `UnexpectedEof` if it ended mid-frame). ``async for item in reader``
    yields ``dict | FramingError`` until the end of the stream.
``MessageWriter(stream: anyio.abc.ByteSendStream, seq=None)``
    ``await writer.send(message) -> int``: safe to call from several tasks (one frame at a time).
    Each message's ``"seq"`` is overwritten at send time with ``seq()`` (default: the writer's own
    counter from 1; pass e.g. a ``protocol.dap.SeqCounter()`` to share one), so sequence numbers
    increase in the order messages hit the wire. (DAP requires seq >= 1; the `protocol.dap`
    helpers leave it 0 for the writer to fill in.)
``write_message(stream, message)``: one frame as given, no locking, no renumbering.

Errors
------
Every error is a `FramingError` with ``.position`` (absolute byte offset in the stream of the
problem: the frame's first byte, or the bad byte in the body) and ``.recoverable``.

* Body errors (recoverable: the length was valid, so the decoder just goes on with the next
  frame): `BodyNotUtf8`, `BodyNotJson`, `BodyNotObject`, `InvalidEnvelope` (no string ``type`` or
  no integer ``seq``).
* Header errors (unrecoverable for that frame): `HeaderTooLarge`, `MalformedHeader`,
  `MissingContentLength`, `BadContentLength`, `BodyTooLarge`. The decoder then resyncs: it drops
  the broken frame's first byte and everything up to the next ``Content-Length:`` (any case), and
  reports one error per resync, not one per dropped byte. A caller that prefers to give up can close the stream.
* `UnexpectedEof`: the stream ended inside a header or body.

Nothing here hangs on bad input: every byte is consumed or held for at most
``max_header_bytes`` / ``max_body_bytes``, and EOF always ends the reader.
"""
from __future__ import annotations

import itertools
import json
import re
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream
from pydantic import BaseModel

HEADER_END = b"\r\n\r\n"
CONTENT_LENGTH_RE = re.compile(rb"content-length:", re.IGNORECASE)
_CONTENT_LENGTH_LEN = len(b"content-length:")
_MAX_LENGTH_DIGITS = 20  # more digits than this is "huge" without ever building the int
RECEIVE_CHUNK = 65536


@dataclass(frozen=True)
class FrameLimits:
    """Size limits: the header block (including its terminating blank line) and one body, in bytes."""

    max_header_bytes: int = 8 * 1024
    max_body_bytes: int = 64 * 1024 * 1024


# ---------------------------------------------------------------------------------------- errors


class FramingError(Exception):
    """A malformed frame. ``position``: absolute stream offset of the problem; ``recoverable``:
    True when the decoder stayed in sync (a body error), False when it had to resync."""

    recoverable: bool = False

    def __init__(self, detail: str, position: int) -> None:
        super().__init__(f"{detail} (at byte {position})")
        self.detail = detail
        self.position = position


class HeaderTooLarge(FramingError):
    """No blank line ending the header block within ``max_header_bytes``."""


class MalformedHeader(FramingError):
    """A header line that is not ASCII ``Name: value``."""


class MissingContentLength(FramingError):
    """A header block without a ``Content-Length`` line."""


class BadContentLength(FramingError):
    """A ``Content-Length`` value that is not a non-negative decimal integer (or is repeated)."""


class BodyTooLarge(FramingError):
    """A ``Content-Length`` over ``max_body_bytes`` (the body is not buffered)."""


class UnexpectedEof(FramingError):
    """The stream ended inside a frame."""


class BodyError(FramingError):
    """The body had a valid length but is not a DAP message; the next frame decodes normally."""

    recoverable = True


class BodyNotUtf8(BodyError):
    """The body is not valid UTF-8; ``position`` is the first bad byte."""


class BodyNotJson(BodyError):
    """The body is not valid JSON (NaN/Infinity and nesting too deep to parse count as invalid)."""


class BodyNotObject(BodyError):
    """The body is valid JSON but not an object."""


class InvalidEnvelope(BodyError):
    """The body is an object without a string ``type`` or an integer ``seq``."""


# ---------------------------------------------------------------------------------------- encode


def _as_dict(message: Mapping[str, Any] | BaseModel) -> Mapping[str, Any]:
    if isinstance(message, BaseModel):
        return message.model_dump(mode="json", by_alias=True, exclude_none=True)
    if not isinstance(message, Mapping):
        raise TypeError(f"a DAP message must be a mapping or a pydantic model, not {type(message).__name__}")
    return message


def encode_body(message: Mapping[str, Any] | BaseModel) -> bytes:
    """The UTF-8 JSON body of one message. Strings that UTF-8 cannot carry (lone surrogates) are
    written as ``\\uXXXX`` escapes instead, so every str round-trips. NaN/Infinity raise ValueError."""
    obj = _as_dict(message)
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def encode_message(message: Mapping[str, Any] | BaseModel) -> bytes:
    """One complete frame: ``Content-Length: N\\r\\n\\r\\n`` + body, N counted in bytes."""
    body = encode_body(message)
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


# ---------------------------------------------------------------------------------------- decode


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def decode_body(body: bytes, position: int) -> dict[str, Any]:
    """Parse one body (which starts at stream offset ``position``) into a message, or raise a `BodyError`."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyNotUtf8(f"body is not valid UTF-8: {exc.reason}", position + exc.start) from None
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        where = position + len(text[: exc.pos].encode("utf-8"))
        raise BodyNotJson(f"body is not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})", where) from None
    except (ValueError, RecursionError) as exc:  # NaN/Infinity, over-long ints, absurd nesting
        raise BodyNotJson(f"body is not valid JSON: {exc}", position) from None
    if not isinstance(obj, dict):
        raise BodyNotObject(f"body is JSON {type(obj).__name__}, not an object", position)
    if not isinstance(obj.get("type"), str):
        raise InvalidEnvelope('message has no string "type"', position)
    seq = obj.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise InvalidEnvelope('message has no integer "seq"', position)
    return obj


def parse_header(block: bytes, position: int, limits: FrameLimits) -> int:
    """The body length announced by one header block (without its blank line), or a header error."""
    length: int | None = None
    for line in block.split(b"\r\n"):
        name, colon, value = line.partition(b":")
        if not colon or not line.isascii() or not name.strip():
            raise MalformedHeader(f"malformed header line {line[:80]!r}", position)
        if name.strip().lower() != b"content-length":
            continue  # Content-Type and other headers are allowed and ignored
        if length is not None:
            raise BadContentLength("Content-Length given twice", position)
        digits = value.strip()
        if not digits.isdigit():
            shown = digits[:40].decode("ascii")
            raise BadContentLength(f"Content-Length {shown!r} is not a non-negative integer", position)
        if len(digits) > _MAX_LENGTH_DIGITS or int(digits) > limits.max_body_bytes:
            raise BodyTooLarge(
                f"Content-Length {digits[:40].decode()} exceeds the limit of {limits.max_body_bytes} bytes", position
            )
        length = int(digits)
    if length is None:
        raise MissingContentLength("header block has no Content-Length", position)
    return length


class FrameDecoder:
    """Incremental Content-Length decoder. Holds: the unconsumed bytes, their stream offset, the
    pending body length (once a header is parsed) and whether it is resyncing after a header error."""

    def __init__(self, limits: FrameLimits | None = None) -> None:
        self.limits = limits or FrameLimits()
        self._buffer = bytearray()
        self._offset = 0  # stream offset of _buffer[0]
        self._body_length: int | None = None  # set between a parsed header and its complete body
        self._frame_start = 0  # stream offset of the current frame's first byte
        self._resyncing = False

    @property
    def buffered(self) -> int:
        """Bytes received but not yet consumed."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[dict[str, Any] | FramingError]:
        """Add bytes; return the messages and errors they complete, in stream order."""
        self._buffer += data
        out: list[dict[str, Any] | FramingError] = []
        while True:
            item = self._step()
            if item is None:
                return out
            out.append(item)

    def feed_eof(self) -> list[FramingError]:
        """The stream ended: an `UnexpectedEof` if a frame was cut off, else nothing. Resets the decoder."""
        partial = self._body_length is not None or (bool(self._buffer) and not self._resyncing)
        errors: list[FramingError] = []
        if partial:
            what = "body" if self._body_length is not None else "header"
            errors.append(UnexpectedEof(f"stream ended inside a frame's {what}", self._frame_start))
        self._offset += len(self._buffer)
        self._buffer.clear()
        self._body_length = None
        self._resyncing = False
        return errors

    def _consume(self, n: int) -> None:
        del self._buffer[:n]
        self._offset += n

    def _step(self) -> dict[str, Any] | FramingError | None:
        """Make progress until one message or error is complete; None when more bytes are needed."""
        while True:
            if self._resyncing and not self._resync():
                return None
            if self._body_length is None:
                error = self._parse_next_header()
                if error is not None:
                    return error
                if self._body_length is None:
                    return None
            if len(self._buffer) < self._body_length:
                return None
            return self._take_body(self._body_length)

    def _parse_next_header(self) -> FramingError | None:
        """Parse a complete header block at the buffer start into ``_body_length``, or report a
        header error and start resyncing. Leaves ``_body_length`` None while the header is partial."""
        self._frame_start = self._offset
        end = self._buffer.find(HEADER_END, 0, self.limits.max_header_bytes)
        if end < 0:
            if len(self._buffer) < self.limits.max_header_bytes:
                return None
            return self._start_resync(
                HeaderTooLarge(f"no end of header within {self.limits.max_header_bytes} bytes", self._offset)
            )
        try:
            length = parse_header(bytes(self._buffer[:end]), self._offset, self.limits)
        except FramingError as exc:
            return self._start_resync(exc)
        self._consume(end + len(HEADER_END))
        self._body_length = length
        return None

    def _take_body(self, length: int) -> dict[str, Any] | FramingError:
        body = bytes(self._buffer[:length])
        position = self._offset
        self._consume(length)
        self._body_length = None
        try:
            return decode_body(body, position)
        except BodyError as exc:
            return exc

    def _start_resync(self, error: FramingError) -> FramingError:
        """Report ``error``; drop the broken frame's first byte and, from then on, everything up to
        the next ``Content-Length:``."""
        self._consume(1)
        self._resyncing = True
        return error

    def _resync(self) -> bool:
        """Drop bytes until a ``Content-Length:`` starts the buffer; False while none is in sight."""
        match = CONTENT_LENGTH_RE.search(self._buffer)
        if match is None:
            keep = _CONTENT_LENGTH_LEN - 1  # a marker may be split across feeds
            if len(self._buffer) > keep:
                self._consume(len(self._buffer) - keep)
            return False
        self._consume(match.start())
        self._resyncing = False
        return True


# ---------------------------------------------------------------------------------------- async


class MessageReader:
    """Reads DAP messages from an anyio byte stream. Holds the stream, a `FrameDecoder`, the decoded
    items not yet handed out, and whether the stream has ended."""

    def __init__(self, stream: ByteReceiveStream, limits: FrameLimits | None = None) -> None:
        self.stream = stream
        self.decoder = FrameDecoder(limits)
        self._pending: list[dict[str, Any] | FramingError] = []
        self._ended = False

    async def receive_item(self) -> dict[str, Any] | FramingError:
        """The next message or framing error; raises `anyio.EndOfStream` when nothing more will come.
        A reset or closed connection counts as the end of the stream."""
        while not self._pending:
            if self._ended:
                raise anyio.EndOfStream
            try:
                data = await self.stream.receive(RECEIVE_CHUNK)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._ended = True
                self._pending.extend(self.decoder.feed_eof())
                continue
            self._pending.extend(self.decoder.feed(data))
        return self._pending.pop(0)

    async def receive(self) -> dict[str, Any]:
        """The next message; raises the `FramingError` of a bad frame (call again to go on) or
        `anyio.EndOfStream` at the end."""
        item = await self.receive_item()
        if isinstance(item, FramingError):
            raise item
        return item

    def __aiter__(self) -> AsyncIterator[dict[str, Any] | FramingError]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[dict[str, Any] | FramingError]:
        while True:
            try:
                item = await self.receive_item()
            except anyio.EndOfStream:
                return
            yield item


async def write_message(stream: ByteSendStream, message: Mapping[str, Any] | BaseModel) -> None:
    """Send one frame on ``stream`` (no locking: use `MessageWriter` when several tasks write)."""
    await stream.send(encode_message(message))


class MessageWriter:
    """Writes whole frames to an anyio byte stream, one at a time, numbering them. Holds the stream,
    a lock, and the ``seq`` source (its own counter from 1 unless one is shared in)."""

    def __init__(self, stream: ByteSendStream, seq: Callable[[], int] | None = None) -> None:
        self.stream = stream
        self.seq = seq if seq is not None else itertools.count(1).__next__
        self._lock = anyio.Lock()

    async def send(self, message: Mapping[str, Any] | BaseModel) -> int:
        """Send one message with ``"seq"`` overwritten by the next number; returns that number."""
        async with self._lock:
            number = self.seq()
            await self.stream.send(encode_message({**_as_dict(message), "seq": number}))
            return number
