#!/usr/bin/env python3
"""The node agent's end of ztunnel's ZDS socket, as a relay for the interop harness.

ztunnel talks to the node agent over a unix SOCK_SEQPACKET socket and receives each pod's network
namespace as a file descriptor (SCM_RIGHTS). Node has neither, so this relay does only that part:
it listens on the socket path given as its argument, accepts ztunnel's connection, and moves whole
packets between the socket and JSON lines on stdin/stdout. It knows nothing of the protocol; the
harness (interop/zds.ts) encodes and decodes every message.

stdin:  {"send": "<base64 packet>", "fd": "<path to open and pass, optional>"}
stdout: {"event": "listening" | "connected" | "closed"} and {"recv": "<base64 packet>"}
"""
import base64
import json
import os
import select
import socket
import sys

# ztunnel's packets are at most 1024 bytes; a larger buffer never truncates one.
MAX_PACKET = 4096


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    path = sys.argv[1]
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.bind(path)
    server.listen(1)
    emit({"event": "listening"})
    conn, _ = server.accept()
    emit({"event": "connected"})
    while True:
        ready, _, _ = select.select([conn, sys.stdin], [], [])
        if conn in ready:
            data = conn.recv(MAX_PACKET)
            if not data:
                emit({"event": "closed"})
                return
            emit({"recv": base64.b64encode(data).decode()})
        if sys.stdin in ready:
            line = sys.stdin.readline()
            if not line:
                return
            msg = json.loads(line)
            data = base64.b64decode(msg["send"])
            if msg.get("fd"):
                fd = os.open(msg["fd"], os.O_RDONLY)
                try:
                    socket.send_fds(conn, [data], [fd])
                finally:
                    os.close(fd)
            else:
                conn.send(data)


if __name__ == "__main__":
    main()
