#!/usr/bin/env bash
# Memory ceilings for the third attack's rows 1, 7 and 8, from /proc: a blackbox file that
# repeats a 20 KB pattern by alias (check-config's peak), eight vendor pages at the bound of
# objects read (19,000 components each) and one past it, and tcp query_response answers of an
# endless line and of 2 MiB of short lines. `make bench` appends its rows; alone it prints them.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
swift build -c release --product lookout >/dev/null
bin=.build/release/lookout
rss() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }

# Row 1: a 990 KB blackbox file whose pattern list repeats one anchored 20 KB pattern by alias.
python3 - "$work/alias.yml" <<'PY'
import sys
pattern = "^" + "a" * 20000 + "$"
items = ["*p"] * 242000
open(sys.argv[1], "w").write("modules:\n  m:\n    prober: http\n    http:\n      fail_if_body_matches_regexp: [&p \"" + pattern + "\", " + ", ".join(items) + "]\n")
PY
size=$(( $(stat -c %s "$work/alias.yml") / 1024 ))
echo "listen: 127.0.0.1:0" > "$work/alias-config.yml"
echo "probe_modules_file: $work/alias.yml" >> "$work/alias-config.yml"
echo "sources: [{name: a, url: \"http://127.0.0.1:1/\"}]" >> "$work/alias-config.yml"
start=$(date +%s%3N)
peak=$( { /usr/bin/time -f "%M" "$bin" check-config --config "$work/alias-config.yml" >/dev/null 2>"$work/alias.err"; } 2>&1 || true)
peak=$(tail -1 "$work/alias.err")
took=$(( $(date +%s%3N) - start ))
echo "| check-config of a $size KB blackbox file repeating a 20 KB pattern by alias (row 1) | \`Benchmarks/hostile-memory.sh\`, /usr/bin/time | $(( peak / 1024 )) MiB peak, $took ms, refused with its position | before: still running at 25 s and 1.6 GB | – |"

# Row 7: eight vendor pages of 19,000 components (1.46 MB each, under the bound) and one of
# 60,000 (3.5 MB, past it), read by one serve.
python3 - "$work" <<'PY'
import sys
comp = '{"id":"c%d","name":"Component %d","status":"operational","group":false}'
def page(n):
    return '{"page":{"id":"p","name":"Big"},"status":{"indicator":"none","description":"ok"},"components":[' + ",".join(comp % (i, i) for i in range(n)) + '],"incidents":[],"scheduled_maintenances":[]}'
open(sys.argv[1] + "/bound.json", "w").write(page(19000))
open(sys.argv[1] + "/past.json", "w").write(page(60000))
PY
hport=$(free_port)
(cd "$work" && python3 -m http.server "$hport" --bind 127.0.0.1 >/dev/null 2>&1) & pids+=($!)
wait_for "http://127.0.0.1:$hport/bound.json"
run_vendors() { # run_vendors PAGE COUNT: RSS before the pages are read, after, and 30 s later
  local port; port=$(free_port)
  {
    echo "listen: 127.0.0.1:$port"
    echo "database: \":memory:\""
    echo "defaults: {interval: 30s}"
    echo "sources:"
    for i in $(seq 1 "$2"); do echo "  - {name: s$i, url: \"http://127.0.0.1:$hport/ok\", vendor_status: {url: \"http://127.0.0.1:$hport/$1?v=$i\", format: statuspage}}"; done
  } > "$work/vendors.yml"
  "$bin" serve --config "$work/vendors.yml" >"$work/vendors.log" 2>&1 & local pid=$!
  wait_for "http://127.0.0.1:$port/-/healthy"
  sleep 10
  local after; after=$(rss "$pid")
  sleep 30
  echo "$after $(rss "$pid")"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
read -r bound_after bound_later <<< "$(run_vendors bound.json 8)"
read -r past_after past_later <<< "$(run_vendors past.json 1)"
echo "| RSS with 8 vendor pages of 19,000 components (1.46 MB each, the most objects read) (row 7) | \`Benchmarks/hostile-memory.sh\`, /proc VmRSS, 10 s and 40 s after start | $bound_after MiB, $bound_later MiB | before: 486 MiB for 8 pages of 60,000, never released | – |"
echo "| RSS with one vendor page of 60,000 components (3.5 MB, refused before anything is built) (row 7) | same | $past_after MiB, $past_later MiB | before: 268 MiB, never released | – |"

# Row 8: tcp query_response against a server that sends an endless line, and one that sends
# 2 MiB of short lines, through /probe; RSS after ten of each.
python3 - "$work" <<'PY' &
import socket, sys, threading
def serve(port_file, payload):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 0)); s.listen(64)
    open(port_file, "w").write(str(s.getsockname()[1]))
    while True:
        c, _ = s.accept()
        def talk(c):
            try:
                for _ in range(64): c.sendall(payload)
            except OSError: pass
            c.close()
        threading.Thread(target=talk, args=(c,), daemon=True).start()
threading.Thread(target=serve, args=(sys.argv[1] + "/line.port", b"x" * 32768), daemon=True).start()
serve(sys.argv[1] + "/lines.port", b"250-nothing to see here\r\n" * 1310)
PY
pids+=($!)
sleep 1
lport=$(free_port)
cat > "$work/tcp-modules.yml" <<CONF
modules:
  banner: {prober: tcp, timeout: 5s, tcp: {query_response: [{expect: "^220 "}]}}
CONF
{ echo "listen: 127.0.0.1:$lport"; echo "database: \":memory:\""; echo "probe_modules_file: $work/tcp-modules.yml"; echo "probe_allow: [\".*127\\\\.0\\\\.0\\\\.1:[0-9]+\"]"; echo "sources: [{name: a, url: \"http://127.0.0.1:$hport/bound.json\", interval: 1h}]"; } > "$work/tcp.yml"
"$bin" serve --config "$work/tcp.yml" >"$work/tcp.log" 2>&1 & tpid=$!; pids+=($tpid)
wait_for "http://127.0.0.1:$lport/-/healthy"
before=$(rss "$tpid")
for port_file in line.port lines.port; do
  port=$(cat "$work/$port_file")
  for _ in $(seq 1 10); do curl -s "http://127.0.0.1:$lport/probe?target=127.0.0.1:$port&module=banner" > "$work/probe.txt"; done
done
after=$(rss "$tpid")
success=$(awk '/^probe_success / {print $2}' "$work/probe.txt")
reason=$(grep -o 'reason="[a-z_]*"' "$work/probe.txt" | head -1 || true)
echo "| RSS of serve before and after 10 /probe calls each against an endless line and 2 MiB of short lines (row 8) | \`Benchmarks/hostile-memory.sh\`, /proc VmRSS | $before → $after MiB (probe_success $success, the last one's $reason) | before: +350 MB in one probe of an expanded send | – |"
