#!/usr/bin/env bash
# The process's weight beside blackbox_exporter's, in one run: binary size and what it links
# (ldd), resident memory at 100 sources probed every second and at 10,000, and start-up to the
# first answered /metrics at 1,000 sources (median of 5) — for the release binary linked against
# the Swift runtime's shared libraries and for the one built as the Dockerfile builds it
# (--static-swift-stdlib). `make bench` appends its rows; alone it prints them.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
swift build -c release --product lookout >/dev/null
swift build -c release --product lookout-sim >/dev/null
swift build -c release --product lookout --static-swift-stdlib --scratch-path .build-static >/dev/null
dynamic=.build/release/lookout
static=.build-static/release/lookout
sim=.build/release/lookout-sim

rss() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
now_ms() { date +%s%3N; }

sport=$(free_port)
"$sim" --listen "127.0.0.1:$sport" >"$work/sim.log" 2>&1 & pids+=($!)
wait_for "http://127.0.0.1:$sport/ok"

config() { # config SOURCES INTERVAL PORT DATABASE
  echo "listen: 127.0.0.1:$3"
  echo "database: \"$4\""
  echo "defaults: {interval: $2, timeout: 2s}"
  echo "sources:"
  for i in $(seq 1 "$1"); do echo "  - {name: s$i, url: \"http://127.0.0.1:$sport/ok?s=$i\"}"; done
}

# RSS of BINARY with SOURCES sources every INTERVAL, 20 s after it answered.
rss_at() {
  local binary=$1 sources=$2 interval=$3 port
  port=$(free_port)
  config "$sources" "$interval" "$port" "$work/rss-$sources.sqlite" > "$work/rss.yml"
  "$binary" serve --config "$work/rss.yml" >"$work/rss.log" 2>&1 & local pid=$!
  wait_for "http://127.0.0.1:$port/-/healthy"
  sleep 20
  rss "$pid"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -f "$work"/rss-*.sqlite*
}

# Start-up of a command to the first answer at URL, ms, median of 5.
startup() {
  local url=$1; shift
  local times=()
  for _ in 1 2 3 4 5; do
    local start; start=$(now_ms)
    "$@" >"$work/start.log" 2>&1 & local pid=$!
    until curl -sf -o /dev/null "$url"; do sleep 0.002; done
    times+=($(( $(now_ms) - start )))
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
  median "${times[@]}"
}

lport=$(free_port)
config 1000 30s "$lport" ":memory:" > "$work/start.yml"
# blackbox_exporter idle, and its start-up, with Debian's example modules.
bport=$(free_port)
prometheus-blackbox-exporter --config.file=/etc/prometheus/blackbox.yml --web.listen-address="127.0.0.1:$bport" --log.level=error >"$work/bb.log" 2>&1 & bpid=$!
wait_for "http://127.0.0.1:$bport/metrics"
sleep 5
bb_rss=$(rss "$bpid")
kill "$bpid"; wait "$bpid" 2>/dev/null || true
bb_start=$(startup "http://127.0.0.1:$bport/metrics" prometheus-blackbox-exporter --config.file=/etc/prometheus/blackbox.yml --web.listen-address="127.0.0.1:$bport" --log.level=error)

for build in dynamic static; do
  binary=${!build}
  size=$(( $(stat -c %s "$binary") / 1048576 ))
  libs=$(ldd "$binary" | wc -l)
  swiftlibs=$(ldd "$binary" | grep -c -E 'libswift|libFoundation|_FoundationICU|libdispatch|libBlocksRuntime' || true)
  r100=$(rss_at "$binary" 100 1s)
  r10k=$(rss_at "$binary" 10000 30s)
  start=$(startup "http://127.0.0.1:$lport/metrics" "$binary" serve --config "$work/start.yml")
  label=$([ "$build" = static ] && echo "--static-swift-stdlib (as the Dockerfile builds it)" || echo "Swift runtime as shared libraries")
  echo "| binary, $label: size and what it links | \`Benchmarks/lean.sh\`, stat and ldd | $size MiB, $libs libraries ($swiftlibs of them Swift's runtime, Foundation and ICU) | blackbox_exporter: one static Go binary | – |"
  echo "| RSS at 100 sources probed every 1 s, 20 s in; $label | \`Benchmarks/lean.sh\`, /proc VmRSS | $r100 MiB | blackbox_exporter idle $bb_rss MiB | $(python3 -c "print(round($r100 / $bb_rss, 2))") (goal ≤ 2) |"
  echo "| RSS at 10,000 sources every 30 s, 20 s in; $label | same | $r10k MiB | goal ≤ 120 MiB | $(python3 -c "print(round($r10k / 120, 2))") |"
  echo "| start-up to the first answered /metrics at 1,000 sources, median of 5; $label | same | $start ms | blackbox_exporter $bb_start ms (Debian's example modules) | $(python3 -c "print(round($start / max($bb_start, 1), 1))") (goal ≤ 2) |"
done
