#!/usr/bin/env python3
"""DNS over TLS on a free loopback port, for dns_over_tls tests: each message (two bytes of
length, then the message) is passed to a DNS server over TCP (--upstream HOST:PORT) and its
answer sent back in TLS. --mode garbage answers with bytes that are no DNS message, --mode short
promises more than it sends and closes. Prints "listening PORT"."""
import argparse
import socket
import ssl
import threading

parser = argparse.ArgumentParser()
parser.add_argument("--cert", required=True)
parser.add_argument("--key", required=True)
parser.add_argument("--upstream", required=True)
parser.add_argument("--mode", default="relay", choices=["relay", "garbage", "short"])
arguments = parser.parse_args()
upstream_host, upstream_port = arguments.upstream.rsplit(":", 1)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(arguments.cert, arguments.key)


def read_exactly(conn, count):
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_message(conn):
    length = read_exactly(conn, 2)
    if length is None:
        return None
    return read_exactly(conn, int.from_bytes(length, "big"))


def serve(conn):
    try:
        conn.settimeout(5)
        conn = context.wrap_socket(conn, server_side=True)
        while True:
            message = read_message(conn)
            if message is None:
                return
            if arguments.mode == "garbage":
                junk = b"\xff" * 5
                conn.sendall(len(junk).to_bytes(2, "big") + junk)
                continue
            if arguments.mode == "short":
                conn.sendall((100).to_bytes(2, "big") + message[:2] + b"\x81\x80")
                return
            with socket.create_connection((upstream_host, int(upstream_port)), timeout=5) as relay:
                relay.sendall(len(message).to_bytes(2, "big") + message)
                answer = read_message(relay)
            if answer is None:
                return
            conn.sendall(len(answer).to_bytes(2, "big") + answer)
    except (socket.timeout, ssl.SSLError, OSError):
        return
    finally:
        conn.close()


server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(64)
print("listening", server.getsockname()[1], flush=True)
while True:
    connection, _ = server.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
