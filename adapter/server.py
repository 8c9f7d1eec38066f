"""The DAP server: one `DapHandler` per connection, over stdio or TCP (anyio + protocol.wire).

`serve_connection(receive, send)` runs one conversation: it reads frames with
`protocol.wire.MessageReader`, answers malformed frames with an output event (the connection goes
on), hands every request to the handler in order, and ends on ``disconnect`` or end of stream.
`serve_stdio()` is what VS Code's DebugAdapterExecutable talks to: DAP frames are the only thing
written to the real stdout (file descriptor 1 is moved aside, and anything else that writes to it,
including child processes, lands on stderr). `serve_tcp(host, port)` accepts any number of clients
at once, each with its own session.
"""
from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable

import anyio
import anyio.abc
from anyio.abc import ByteReceiveStream, ByteSendStream

from adapter.handlers import DapHandler
from protocol import dap
from protocol.wire import FramingError, MessageReader, MessageWriter

log = logging.getLogger("adapter")


async def serve_connection(receive: ByteReceiveStream, send: ByteSendStream, name: str = "client") -> None:
    """Serve one DAP conversation until disconnect or the end of the stream."""
    writer = MessageWriter(send, seq=dap.SeqCounter())
    handler = DapHandler(writer.send, log.getChild(name))
    reader = MessageReader(receive)
    log.info("%s connected", name)
    try:
        async for item in reader:
            if isinstance(item, FramingError):
                log.warning("%s sent a malformed frame: %s", name, item)
                await handler.output(f"neural debugger: ignored a malformed DAP frame: {item}\n", "console")
                continue
            await handler.handle(item)
            if handler.closed:
                break
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        log.info("%s went away", name)
    finally:
        with anyio.CancelScope(shield=True):
            await handler.close()
        log.info("%s disconnected", name)


class FdStream(anyio.abc.ByteStream):
    """A byte stream over two raw file descriptors (stdin/stdout), read and written in worker threads."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await anyio.to_thread.run_sync(os.read, self.read_fd, max_bytes, abandon_on_cancel=True)
        if not data:
            raise anyio.EndOfStream
        return data

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            try:
                written = await anyio.to_thread.run_sync(os.write, self.write_fd, view)
            except (BrokenPipeError, OSError) as exc:
                raise anyio.BrokenResourceError from exc
            view = view[written:]

    async def send_eof(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def claim_stdout() -> int:
    """Move the real stdout aside for DAP frames; fd 1 and sys.stdout then point at stderr."""
    sys.stdout.flush()
    dap_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return dap_fd


async def serve_stdio() -> None:
    """Serve one client on stdin/stdout (VS Code's DebugAdapterExecutable)."""
    stream = FdStream(sys.stdin.fileno(), claim_stdout())
    await serve_connection(stream, stream, "stdio")


async def serve_tcp(host: str, port: int, ready: Callable[[str, int], None] | None = None) -> None:
    """Accept clients on host:port forever, one session each; ``ready(host, port)`` once listening."""
    listener = await anyio.create_tcp_listener(local_host=host, local_port=port, reuse_port=False)
    bound = listener.extra(anyio.abc.SocketAttribute.local_address)
    if ready is not None:
        ready(str(bound[0]), int(bound[1]))
    counter = iter(range(1, 1 << 62))

    async def serve_client(stream: anyio.abc.SocketStream) -> None:
        name = f"client{next(counter)}"
        async with stream:
            await serve_connection(stream, stream, name)

    await listener.serve(serve_client)
