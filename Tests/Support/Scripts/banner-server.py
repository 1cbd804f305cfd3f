#!/usr/bin/env python3
"""A line-based TCP server on a free loopback port, for tcp `query_response` tests: it greets
with an SMTP-like banner, answers `EHLO NAME` with `250 hello NAME`, anything else with `500`,
and closes a connection that says nothing for half a second. Prints "listening PORT", then
"connection from ADDRESS" for each connection."""
import socket
import threading


def serve(conn):
    with conn:
        conn.sendall(b"220 banner.test ESMTP ready\r\n")
        conn.settimeout(0.5)
        data = b""
        try:
            while b"\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
        except socket.timeout:
            return
        line = data.split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", "replace")
        if line.startswith("EHLO "):
            conn.sendall(("250 hello " + line[5:] + "\r\n").encode())
        else:
            conn.sendall(b"500 what\r\n")


server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(64)
print("listening", server.getsockname()[1], flush=True)
while True:
    connection, peer = server.accept()
    print("connection from", peer[0], flush=True)
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
