#!/usr/bin/env python3
"""A line-based TCP server on a free loopback port, for tcp `query_response` tests: it greets
with an SMTP-like banner, answers `EHLO NAME` with `250 hello NAME`, anything else with `500`,
and closes a connection that says nothing for half a second. Prints "listening PORT", then
"connection from ADDRESS" for each connection.

With --cert and --key it also speaks TLS: `STARTTLS` is answered `220 ready to start TLS`, the
connection is wrapped, and one more line is answered over TLS; and a second port speaks TLS from
the first byte (printed as "tls listening PORT"), and two more answer a PostgreSQL client's
SSLRequest: one with S and the handshake ("postgres listening PORT"), one with N ("postgres-plain
listening PORT")."""
import argparse
import socket
import ssl
import threading

parser = argparse.ArgumentParser()
parser.add_argument("--cert")
parser.add_argument("--key")
arguments = parser.parse_args()
context = None
if arguments.cert:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(arguments.cert, arguments.key)


def read_line(conn):
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return None
        data += chunk
    return data.split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", "replace")


def serve(conn, wrap_first=False):
    try:
        if wrap_first:
            conn.settimeout(2)
            conn = context.wrap_socket(conn, server_side=True)
        conn.sendall(b"220 banner.test ESMTP ready\r\n")
        conn.settimeout(0.5)
        while True:
            line = read_line(conn)
            if line is None:
                return
            if line.startswith("EHLO "):
                conn.sendall(("250 hello " + line[5:] + "\r\n").encode())
                return
            if line == "STARTTLS" and context is not None and not isinstance(conn, ssl.SSLSocket):
                conn.sendall(b"220 ready to start TLS\r\n")
                conn.settimeout(2)
                conn = context.wrap_socket(conn, server_side=True)
                conn.settimeout(0.5)
                continue
            conn.sendall(b"500 what\r\n")
            return
    except (socket.timeout, ssl.SSLError, OSError):
        return
    finally:
        conn.close()


def serve_postgres(conn, offers_tls):
    try:
        conn.settimeout(2)
        request = b""
        while len(request) < 8:
            chunk = conn.recv(8 - len(request))
            if not chunk:
                return
            request += chunk
        if request != b"\x00\x00\x00\x08\x04\xd2\x16\x2f":
            return
        if not offers_tls:
            conn.sendall(b"N")
            conn.recv(1)
            return
        conn.sendall(b"S")
        conn = context.wrap_socket(conn, server_side=True)
        conn.recv(1)
    except (socket.timeout, ssl.SSLError, OSError):
        return
    finally:
        conn.close()


def accept(server, wrap_first, handler=None):
    while True:
        connection, peer = server.accept()
        print("connection from", peer[0], flush=True)
        if handler is None:
            threading.Thread(target=serve, args=(connection, wrap_first), daemon=True).start()
        else:
            threading.Thread(target=handler, args=(connection,), daemon=True).start()


def listen_extra(name, handler=None, wrap_first=False):
    extra = socket.socket()
    extra.bind(("127.0.0.1", 0))
    extra.listen(64)
    print(name, "listening", extra.getsockname()[1], flush=True)
    threading.Thread(target=accept, args=(extra, wrap_first, handler), daemon=True).start()


server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(64)
print("listening", server.getsockname()[1], flush=True)
if context is not None:
    listen_extra("tls", wrap_first=True)
    listen_extra("postgres", handler=lambda conn: serve_postgres(conn, True))
    listen_extra("postgres-plain", handler=lambda conn: serve_postgres(conn, False))
accept(server, False)
