"""The drain's listening-socket filter, on real sockets: new handshakes stop, nothing begun is reset."""
import socket
import sys

import pytest

from distrain.serving.server import _drop_new_connections

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="socket filters are Linux's")


def test_after_the_filter_a_queued_connection_is_served_a_new_one_never_connects_and_then_is_refused():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    address = listener.getsockname()
    queued = socket.create_connection(address, timeout=5)
    queued.sendall(b"request")
    assert _drop_new_connections(listener)

    accepted, _ = listener.accept()
    assert accepted.recv(7) == b"request"
    accepted.sendall(b"answer")
    assert queued.recv(6) == b"answer"  # the filter (which children inherit) keeps everything but SYNs

    late = socket.socket()
    late.settimeout(0.5)
    with pytest.raises((socket.timeout, TimeoutError)):
        late.connect(address)  # its SYN is dropped: the client keeps retrying, nothing is reset
    listener.close()
    refused = socket.socket()
    refused.settimeout(5)
    with pytest.raises(ConnectionRefusedError):
        refused.connect(address)
    for open_socket in (queued, accepted, late, refused):
        open_socket.close()
