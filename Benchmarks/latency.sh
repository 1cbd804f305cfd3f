#!/usr/bin/env bash
# Measured truth under load: does Lookout report a 100 ms upstream at 100 ms while it probes
# 5,000 other sources a second? `make bench` runs it (Benchmarks/run.sh appends its rows);
# `Benchmarks/latency.sh` alone prints them. All on loopback: nginx for the load, lookout-sim's
# /slow?ms=100 as the upstream (its /slow/stats is the upstream's own clock), and
# blackbox_exporter reading the same upstream under the same load (wrk at its /probe).
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
build_release
sources=${LOOKOUT_BENCH_SOURCES:-5000}

nport=$(free_port)
start_nginx "$nport"
sport=$(free_port)
"$bin/lookout-sim" --listen "127.0.0.1:$sport" >"$work/sim.log" 2>&1 & pids+=($!)
wait_for "http://127.0.0.1:$sport/ok"
slow="http://127.0.0.1:$sport/slow?ms=100"

# Lookout: 5,000 sources every second against nginx, and the slow upstream every second, in
# LATENCY_ROUNDS rounds (3 by default), each a fresh `lookout serve` and database; the row gives
# each round's p95 and their median. LATENCY_PEER=0 leaves blackbox_exporter's half out.
rounds=${LATENCY_ROUNDS:-3}
lk_p50s=()
lk_p95s=()
for round in $(seq "$rounds"); do
  lport=$(free_port)
  {
    echo "listen: 127.0.0.1:$lport"
    echo "database: $work/latency-$round.sqlite"
    echo "defaults: {interval: 1s, timeout: 2s, rate_limit: {rate: 100/s, burst: 100}}"
    echo "sources:"
    echo "  - {name: slow100, url: \"$slow\"}"
    for i in $(seq 1 "$sources"); do echo "  - {name: s$i, url: \"http://127.0.0.1:$nport/s/$i\"}"; done
  } > "$work/lookout.yml"
  drain_time_wait
  "$bin/lookout" serve --config "$work/lookout.yml" >"$work/serve.log" 2>&1 & spid=$!; pids+=($spid)
  wait_for "http://127.0.0.1:$lport/-/healthy"
  sleep 70  # more than the 64 attempts the quantiles are taken over
  scrape=$(curl -s "http://127.0.0.1:$lport/metrics")
  metric() { echo "$scrape" | awk -v name="$1" '$1 == name {print $2}'; }
  lk_p50s+=("$(metric 'lookout_probe_latency_seconds{source="slow100",quantile="0.5"}')")
  lk_p95s+=("$(metric 'lookout_probe_latency_seconds{source="slow100",quantile="0.95"}')")
  kill "$spid"; wait "$spid" 2>/dev/null || true
done
upstream=$(curl -s "http://127.0.0.1:$sport/slow/stats")

# blackbox_exporter: wrk drives its /probe against nginx (its saturation, as run.sh measures it)
# while the slow upstream is probed through it once a second, its probe_duration_seconds read.
: > "$work/bb.txt"
bb_rate=0
if [ "${LATENCY_PEER:-1}" != 0 ]; then
  bport=$(free_port)
  printf 'modules:\n  http_2xx:\n    prober: http\n    timeout: 5s\n' > "$work/blackbox.yml"
  prometheus-blackbox-exporter --config.file="$work/blackbox.yml" --web.listen-address="127.0.0.1:$bport" --log.level=error & pids+=($!)
  wait_for "http://127.0.0.1:$bport/-/healthy"
  encoded=$(python3 -c "import urllib.parse, sys; print(urllib.parse.quote(sys.argv[1], safe=''))" "$slow")
  wrk -t2 -c64 -d40s "http://127.0.0.1:$bport/probe?target=127.0.0.1:$nport&module=http_2xx" > "$work/wrk.txt" & wpid=$!
  sleep 2
  for _ in $(seq 30); do
    curl -s "http://127.0.0.1:$bport/probe?target=$encoded&module=http_2xx" | awk '$1 == "probe_duration_seconds" {print $2}' >> "$work/bb.txt"
    sleep 1
  done
  wait "$wpid" || true
  bb_rate=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")
fi

python3 - "${lk_p50s[*]}" "${lk_p95s[*]}" "$upstream" "$work/bb.txt" "${bb_rate:-0}" "$sources" <<'PY'
import json, statistics, sys
lk50s = [float(v) * 1000 for v in sys.argv[1].split()]
lk95s = [float(v) * 1000 for v in sys.argv[2].split()]
lk50, lk95 = statistics.median(lk50s), statistics.median(lk95s)
up = json.loads(sys.argv[3])
bb = sorted(float(v) * 1000 for v in open(sys.argv[4]) if v.strip())
def q(values, p): return values[min(len(values) - 1, round((len(values) - 1) * p))] if values else float("nan")
sources, rate = sys.argv[6], float(sys.argv[5])
rounds = " ".join(f"{v:.1f}" for v in lk95s)
print(f"| latency of a 100 ms upstream while probing {sources} others every 1 s: Lookout's p95 (one attempt, lookout_probe_latency_seconds; rounds {rounds} ms, median) beside the upstream's own clock (lookout-sim /slow/stats, {up['count']} answers) | `Benchmarks/latency.sh` | Lookout p50 {lk50:.1f} ms, p95 {lk95:.1f} ms | upstream p50 {up['p50_ms']:.1f} ms, p95 {up['p95_ms']:.1f} ms | Lookout p95 − upstream p95: {lk95 - up['p95_ms']:+.1f} ms (worst round {max(lk95s) - up['p95_ms']:+.1f}) |")
if bb:
    print(f"| the same upstream through blackbox_exporter while wrk drives its /probe at {rate:.0f}/s (probe_duration_seconds, {len(bb)} probes) | same | blackbox p50 {q(bb, 0.5):.1f} ms, p95 {q(bb, 0.95):.1f} ms | upstream p95 {up['p95_ms']:.1f} ms | blackbox p95 − upstream p95: {q(bb, 0.95) - up['p95_ms']:+.1f} ms |")
PY
