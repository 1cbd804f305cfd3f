#!/usr/bin/env python3
"""A DNS server on a free loopback port (UDP and TCP on the same number) that answers as an
attacker or a broken server would, by the name asked:
  forged.test         an A record, its ID the question's XOR 0xFFFF (over UDP and TCP)
  zeros.test          zero bytes: 12 over UDP; over TCP a stream of 64 then the close
  truncated.test      over UDP the TC bit and no record; over TCP the whole answer (127.0.0.8)
  truncated-only.test over UDP the TC bit; over TCP the connection closed unanswered
  anything else       an A record, 127.0.0.7
Prints "listening PORT"."""
import socket
import struct
import sys
import threading


def question(query):
    """The question's name (lower case) and where the question section ends."""
    offset, labels = 12, []
    while offset < len(query) and query[offset] != 0:
        length = query[offset]
        labels.append(query[offset + 1 : offset + 1 + length].decode("ascii", "replace"))
        offset += 1 + length
    return ".".join(labels).lower(), offset + 5


def answer(query, address=None, truncated=False, forged=False):
    ident = struct.unpack(">H", query[:2])[0]
    if forged:
        ident ^= 0xFFFF
    _, end = question(query)
    flags = 0x8180 | (0x0200 if truncated else 0)
    records = 1 if address else 0
    header = struct.pack(">HHHHHH", ident, flags, 1, records, 0, 0)
    body = query[12:end]
    if address:
        body += struct.pack(">HHHIH", 0xC00C, 1, 1, 300, 4) + socket.inet_aton(address)
    return header + body


def udp_reply(query):
    name, _ = question(query)
    if name == "forged.test":
        return answer(query, "127.0.0.9", forged=True)
    if name == "zeros.test":
        return bytes(12)
    if name in ("truncated.test", "truncated-only.test"):
        return answer(query, truncated=True)
    return answer(query, "127.0.0.7")


def serve_udp(sock):
    while True:
        query, peer = sock.recvfrom(4096)
        sock.sendto(udp_reply(query), peer)


def read_exactly(conn, count):
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def serve_tcp_connection(conn):
    with conn:
        length = read_exactly(conn, 2)
        query = length and read_exactly(conn, struct.unpack(">H", length)[0])
        if not query:
            return
        name, _ = question(query)
        if name == "zeros.test":
            conn.sendall(bytes(64))
            return
        if name == "truncated-only.test":
            return
        reply = {
            "forged.test": lambda: answer(query, "127.0.0.9", forged=True),
            "truncated.test": lambda: answer(query, "127.0.0.8"),
        }.get(name, lambda: answer(query, "127.0.0.7"))()
        conn.sendall(struct.pack(">H", len(reply)) + reply)


def serve_tcp(sock):
    while True:
        conn, _ = sock.accept()
        threading.Thread(target=serve_tcp_connection, args=(conn,), daemon=True).start()


tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("127.0.0.1", 0))
tcp.listen(16)
port = tcp.getsockname()[1]
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", port))
threading.Thread(target=serve_udp, args=(udp,), daemon=True).start()
print(f"listening {port}", flush=True)
sys.stdout.flush()
serve_tcp(tcp)
