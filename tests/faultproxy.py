"""A fault-injecting TCP proxy for tests: it stands between a client and a server and fails on demand.

``FaultProxy(host, port)`` listens on ``127.0.0.1`` (an ephemeral port, in ``proxy.port``) and forwards
every connection to the server until told otherwise:

- :meth:`refuse`: the server is down: existing connections are reset, new ones are refused;
- :meth:`hang`: the network hangs: new connections are accepted and never answered, and nothing more
  passes on existing ones (their bytes are held, as a silent network holds them);
- :meth:`cut_next_query`: the next bytes a client sends on an existing connection reset it instead of
  reaching the server (a connection cut mid-query);
- :meth:`restore`: the server is back, on the same port: new connections are forwarded again (those a
  hang held or a refusal reset stay dead, as after a real restart).

One thread accepts, one thread per connection pumps both directions; :meth:`close` stops them all.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import struct
import threading
from types import TracebackType

_POLL = 0.02
"""Seconds a pump waits for bytes before it looks at the proxy's state again."""


class _Pair:
    """A client's connection and the proxy's connection to the server (None while hung at accept)."""

    def __init__(self, client: socket.socket, server: socket.socket | None) -> None:
        self.client = client
        self.server = server
        self.dead = False

    def reset(self) -> None:
        """Close both sides with a reset (RST), as a crashed server or a cut cable would."""
        self.dead = True
        for sock in (self.client, self.server):
            if sock is None:
                continue
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()


class FaultProxy:
    """A TCP proxy to ``host:port`` that can refuse, hang, cut a query and come back."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self._lock = threading.Lock()
        self._pairs: list[_Pair] = []
        self._hung = False
        self._cut = False
        self._closed = False
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._listen()

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>``: where clients connect."""
        return f"127.0.0.1:{self.port}"

    def _listen(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.settimeout(_POLL)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._acceptor = self._start(self._accept, listener)

    def _start(self, target: object, *args: object) -> threading.Thread:
        thread = threading.Thread(target=target, args=args, daemon=True, name="faultproxy")  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()
        return thread

    def _accept(self, listener: socket.socket) -> None:
        while self._listener is listener:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._listener is not listener:  # stopped meanwhile: as if never accepted
                _Pair(client, None).reset()
                return
            with self._lock:
                hung = self._hung
            server = None
            if not hung:
                try:
                    server = socket.create_connection(self.target, timeout=5)
                except OSError:
                    client.close()
                    continue
            pair = _Pair(client, server)
            with self._lock:
                self._pairs.append(pair)
            if server is not None:
                self._start(self._pump, pair)

    def _pump(self, pair: _Pair) -> None:
        assert pair.server is not None
        ends = {pair.client: pair.server, pair.server: pair.client}
        with selectors.DefaultSelector() as selector:
            for sock in ends:
                selector.register(sock, selectors.EVENT_READ)
            while not pair.dead:
                with self._lock:
                    hung = self._hung
                if hung:
                    threading.Event().wait(_POLL)
                    continue
                try:
                    ready = selector.select(_POLL)
                except (OSError, ValueError):
                    break
                for key, _ in ready:
                    source: socket.socket = key.fileobj  # type: ignore[assignment]
                    if source is pair.client and self._take_cut():
                        pair.reset()
                        return
                    try:
                        data = source.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        pair.reset()
                        return
                    try:
                        ends[source].sendall(data)
                    except OSError:
                        pair.reset()
                        return

    def _take_cut(self) -> bool:
        with self._lock:
            cut, self._cut = self._cut, False
        return cut

    def refuse(self) -> None:
        """The server goes down: reset every connection, refuse new ones."""
        self._stop_listening()
        self._reset_all()

    def hang(self) -> None:
        """The network hangs: accept new connections but never answer; stop existing ones."""
        with self._lock:
            self._hung = True

    def cut_next_query(self) -> None:
        """Reset the connection on which a client next sends bytes, before they reach the server."""
        with self._lock:
            self._cut = True

    def restore(self) -> None:
        """The server is back on the same port: connections made from now on are forwarded."""
        self._reset_all()
        with self._lock:
            self._hung = False
            self._cut = False
        if self._listener is None and not self._closed:
            self._listen()

    def _stop_listening(self) -> None:
        """Close the port, and wait until it refuses (the accepting thread has let go of it)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
            self._acceptor.join(5)

    def _reset_all(self) -> None:
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            pair.reset()

    def close(self) -> None:
        """Stop listening, reset every connection, and wait for the proxy's threads to end."""
        self._closed = True
        self._stop_listening()
        self._reset_all()
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
