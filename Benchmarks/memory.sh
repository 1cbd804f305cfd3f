#!/usr/bin/env bash
# Memory with a ceiling: what traffic and failing upstreams make Lookout hold. `make bench` runs
# it (Benchmarks/run.sh appends its rows); `Benchmarks/memory.sh` alone prints them. All on
# loopback against lookout-sim.
#   1. 100 sources answering 500 every second with the default rules, for
#      LOOKOUT_BENCH_MEMORY_SECONDS (600): RSS at 15 s and at the end.
#   2. 160 concurrent /probe calls of a 64 MiB target (the /probe limit is 32): RSS idle, peak and
#      a minute after.
#   3. The same with a 1 GiB gzip bomb (1 MiB on the wire), through a plain module (the body kept
#      as it came) and one with `compression: gzip` (decoded as it arrives, counted, dropped).
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
build_release
seconds=${LOOKOUT_BENCH_MEMORY_SECONDS:-600}
rss() { awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$1/status"; }

sport=$(free_port)
"$bin/lookout-sim" --listen "127.0.0.1:$sport" >"$work/sim.log" 2>&1 & pids+=($!)
wait_for "http://127.0.0.1:$sport/ok"

# 1. Failing sources, default rules, a database on disk.
lport=$(free_port)
sources_config "$lport" "$work/failing.sqlite" 1s 100 failing "http://127.0.0.1:$sport/status/500" > "$work/failing.yml"
"$bin/lookout" serve --config "$work/failing.yml" >"$work/failing.log" 2>&1 & fpid=$!; pids+=($fpid)
wait_for "http://127.0.0.1:$lport/-/healthy"
# The live heap (lookout_heap_allocated_bytes) beside RSS: what Lookout holds, apart from what
# the allocator keeps free.
heap() { curl -s "http://127.0.0.1:$lport/metrics" | awk '/^lookout_heap_allocated_bytes / {print int($2 / 1048576)}'; }
sleep 15
early=$(rss "$fpid"); early_heap=$(heap)
sleep $((seconds > 15 ? seconds - 15 : 0))
late=$(rss "$fpid"); late_heap=$(heap)
kill "$fpid"; wait "$fpid" 2>/dev/null || true
echo "| resident memory, 100 sources failing every 1 s with the default rules (live heap in brackets) | \`lookout serve\`, ${seconds} s | $late MiB ($late_heap MiB) at the end | $early MiB ($early_heap MiB) at 15 s | $(python3 -c "print(round($late / max(1, $early), 2))") |"

# 2 and 3. 160 concurrent /probe calls of a large body, then of a gzip bomb.
pport=$(free_port)
printf 'listen: 127.0.0.1:%s\ndatabase: ":memory:"\nprobe_modules:\n  http_2xx: {kind: http, timeout: 30s, allow: ["http://127\\\\.0\\\\.0\\\\.1:[0-9]+/.*"]}\n  http_gzip: {kind: http, timeout: 30s, compression: gzip, allow: ["http://127\\\\.0\\\\.0\\\\.1:[0-9]+/.*"]}\nsources:\n  - {name: a, url: "http://127.0.0.1:%s/ok", interval: 1h}\n' "$pport" "$sport" > "$work/probe.yml"
"$bin/lookout" serve --config "$work/probe.yml" >"$work/probe.log" 2>&1 & ppid=$!; pids+=($ppid)
wait_for "http://127.0.0.1:$pport/-/healthy"
# The bomb is compressed once by the simulator, before anything is measured.
curl -s -o /dev/null "http://127.0.0.1:$sport/gzip-bomb/1073741824"
sleep 2

# probe_burst PATH MODULE LABEL: 160 concurrent calls; prints one row.
probe_burst() {
  local idle peak after served target monitor calls=()
  idle=$(rss "$ppid")
  rm -f "$work"/probe-*.txt "$work/peak"
  target=$(python3 -c "import urllib.parse, sys; print(urllib.parse.quote(sys.argv[1], safe=''))" "http://127.0.0.1:$sport$1")
  ( peak=0; while kill -0 "$ppid" 2>/dev/null; do r=$(rss "$ppid"); [ "$r" -gt "$peak" ] && peak=$r; echo "$peak" > "$work/peak"; sleep 0.2; done ) & monitor=$!
  for i in $(seq 160); do curl -s -o "$work/probe-$i.txt" "http://127.0.0.1:$pport/probe?target=$target&module=$2" & calls+=($!); done
  wait "${calls[@]}"
  served=$(grep -l '^probe_success 1' "$work"/probe-*.txt | wc -l)
  sleep 60
  after=$(rss "$ppid")
  kill "$monitor" 2>/dev/null || true
  peak=$(cat "$work/peak")
  echo "| resident memory under 160 concurrent /probe calls of $3 ($served served whole, the rest 503 past the limit of 32) | \`curl\` ×160 at \`/probe\` | peak $peak MiB, $after MiB a minute after | idle $idle MiB | peak − idle: $((peak - idle)) MiB |"
}
probe_burst /download/67108864 http_2xx "a 64 MiB body"
probe_burst /gzip-bomb/1073741824 http_2xx "a 1 GiB gzip bomb, plain module"
probe_burst /gzip-bomb/1073741824 http_gzip "a 1 GiB gzip bomb, \`compression: gzip\`"
