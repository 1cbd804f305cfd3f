#!/usr/bin/env python3
"""startup.py URL RUNS COMMAND...: milliseconds from spawning COMMAND until URL answers 200, the
median of RUNS runs (each process killed after). Polls from this process every millisecond with
a plain socket, so no curl is forked beside the start-up being timed."""
import socket, statistics, subprocess, sys, time
from urllib.parse import urlsplit

url, runs, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
parts = urlsplit(url)
request = f"GET {parts.path or '/'} HTTP/1.0\r\nHost: {parts.netloc}\r\n\r\n".encode()

def answers():
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=1) as s:
            s.sendall(request)
            status = s.recv(16).split(b" ")
            return len(status) > 1 and status[1] == b"200"
    except OSError:
        return False

times = []
for _ in range(runs):
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not answers():
        if process.poll() is not None: sys.exit(f"{command[0]} exited with {process.returncode} before {url} answered")
        if time.monotonic() - start > 30: sys.exit(f"{url} did not answer within 30 s")
        time.sleep(0.001)
    times.append((time.monotonic() - start) * 1000)
    process.kill(); process.wait()
print(round(statistics.median(times)), " ".join(str(round(t)) for t in times))
