#!/usr/bin/env bash
# The process's weight beside blackbox_exporter's, in one run: binary size and what it links
# (ldd), resident memory at 100 sources probed every second and at 10,000, and start-up to the
# first answered /metrics at 1,000 sources (median of 11) beside the exec-to-exit floor — for the release binary linked against
# the Swift runtime's shared libraries and for the one built as the Dockerfile builds it
# (--static-swift-stdlib). Beside each, the same figures of Benchmarks/lookout-floor (the libraries
# Lookout must link, doing the least a monitor can, none of Lookout's code): what no change to
# Lookout's code can take off; and how many of the functions in the link order
# (Sources/lookout/lookout.order) the binary still has. `make bench` appends its rows; alone it
# prints them.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
swift build -c release --product lookout >/dev/null
swift build -c release --product lookout-sim >/dev/null
swift build -c release --product lookout --static-swift-stdlib --scratch-path .build-static >/dev/null
swift build -c release --product lookout-floor >/dev/null
swift build -c release --product lookout-floor --static-swift-stdlib --scratch-path .build-static >/dev/null
dynamic=.build/release/lookout
static=.build-static/release/lookout
sim=.build/release/lookout-sim

rss() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
now_ms() { date +%s%3N; }

sport=$(free_port)
"$sim" --listen "127.0.0.1:$sport" >"$work/sim.log" 2>&1 & pids+=($!)
wait_for "http://127.0.0.1:$sport/ok"


# RSS of BINARY with SOURCES sources every INTERVAL, 20 s after it answered.
rss_at() {
  local binary=$1 sources=$2 interval=$3 port
  port=$(free_port)
  sources_config "$port" "$work/rss-$sources.sqlite" "$interval" "$sources" s "http://127.0.0.1:$sport/ok" > "$work/rss.yml"
  "$binary" serve --config "$work/rss.yml" >"$work/rss.log" 2>&1 & local pid=$!
  wait_for "http://127.0.0.1:$port/-/healthy"
  sleep 20
  echo "$(rss "$pid") $(rss_split "$pid")"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -f "$work"/rss-*.sqlite*
}

# RSS of lookout-floor BINARY with SOURCES sources every 1 s, 20 s after it answered.
floor_rss_at() {
  local port
  port=$(free_port)
  "$1" "$port" "http://127.0.0.1:$sport/ok" "$2" 1000 >"$work/floor.log" 2>&1 & local pid=$!
  wait_for "http://127.0.0.1:$port/metrics"
  sleep 20
  echo "$(rss "$pid") $(rss_split "$pid")"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

# Start-up of a command to the first answer at URL, ms, median of 11 (Benchmarks/startup.py
# polls with a socket every millisecond: no curl forked beside the start being timed).
startup() { python3 Benchmarks/startup.py "$1" 11 "${@:2}" | awk '{print $1}'; }

# The floor under any start-up: exec to exit of `COMMAND --version`, ms, median of 11 (the
# dynamic loader and the runtime's initialisers, no config).
floor() {
  python3 - "$@" <<'PY'
import statistics, subprocess, sys, time
times = []
for _ in range(11):
    start = time.monotonic()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    times.append((time.monotonic() - start) * 1000)
print(round(statistics.median(times), 1))
PY
}

# RSS of PID split: file-backed (code and data of the binary and its libraries) and anonymous.
rss_split() { awk '/RssFile/ {f = $2} /RssAnon/ {a = $2} END {printf "%.1f file, %.1f anonymous", f / 1024, a / 1024}' "/proc/$1/status"; }

lport=$(free_port)
sources_config "$lport" ":memory:" 30s 1000 s "http://127.0.0.1:$sport/ok" > "$work/start.yml"
# blackbox_exporter idle, and its start-up, with Debian's example modules.
bport=$(free_port)
prometheus-blackbox-exporter --config.file=/etc/prometheus/blackbox.yml --web.listen-address="127.0.0.1:$bport" --log.level=error >"$work/bb.log" 2>&1 & bpid=$!
wait_for "http://127.0.0.1:$bport/metrics"
sleep 5
bb_rss=$(rss "$bpid")
bb_split=$(rss_split "$bpid")
kill "$bpid"; wait "$bpid" 2>/dev/null || true
bb_floor=$(floor prometheus-blackbox-exporter --version)
bb_start=$(startup "http://127.0.0.1:$bport/metrics" prometheus-blackbox-exporter --config.file=/etc/prometheus/blackbox.yml --web.listen-address="127.0.0.1:$bport" --log.level=error)

for build in dynamic static; do
  binary=${!build}
  size=$(( $(stat -c %s "$binary") / 1048576 ))
  libs=$(ldd "$binary" | wc -l)
  swiftlibs=$(ldd "$binary" | grep -c -E 'libswift|libFoundation|_FoundationICU|libdispatch|libBlocksRuntime' || true)
  read -r r100 r100_split < <(rss_at "$binary" 100 1s)
  read -r r10k r10k_split < <(rss_at "$binary" 10000 30s)
  base=$(floor "$binary" --version)
  start=$(startup "http://127.0.0.1:$lport/metrics" "$binary" serve --config "$work/start.yml")
  floor_binary=$(dirname "$binary")/lookout-floor
  read -r f100 f100_split < <(floor_rss_at "$floor_binary" 100)
  floor_start=$(startup "http://127.0.0.1:$lport/metrics" "$floor_binary" "$lport" "http://127.0.0.1:$sport/ok" 1000 30000)
  label=$([ "$build" = static ] && echo "--static-swift-stdlib (as the Dockerfile builds it)" || echo "Swift runtime as shared libraries")
  echo "| binary, $label: size and what it links | \`Benchmarks/lean.sh\`, stat and ldd | $size MiB, $libs libraries ($swiftlibs of them Swift's runtime, Foundation and ICU) | blackbox_exporter: one static Go binary | – |"
  # How much of the link order (Package.swift) the binary still has: a stale file shows here.
  ordered=$(comm -12 <(sort -u Sources/lookout/lookout.order) <(nm --defined-only "$binary" | awk '{print $3}' | sort -u) | wc -l)
  echo "| link order: functions of \`Sources/lookout/lookout.order\` (\`make link-order\`) the binary has, $label | \`Benchmarks/lean.sh\`, nm | $ordered of $(wc -l <Sources/lookout/lookout.order) | – | – |"
  echo "| RSS at 100 sources probed every 1 s, 20 s in; $label | \`Benchmarks/lean.sh\`, /proc VmRSS | $r100 MiB ($r100_split) | blackbox_exporter idle $bb_rss MiB ($bb_split) | $(python3 -c "print(round($r100 / $bb_rss, 2))") (goal ≤ 2) |"
  echo "| the floor: RSS of \`lookout-floor\` (GRDB, Foundation, SQLite, libcurl, libmicrohttpd; none of Lookout's code) at 100 sources every 1 s, 20 s in; $label | \`Benchmarks/lean.sh\`, /proc VmRSS | $f100 MiB ($f100_split) | blackbox_exporter idle $bb_rss MiB | $(python3 -c "print(round($f100 / $bb_rss, 2))") |"
  echo "| RSS at 10,000 sources every 30 s, 20 s in; $label | same | $r10k MiB ($r10k_split) | goal ≤ 120 MiB | $(python3 -c "print(round($r10k / 120, 2))") |"
  echo "| exec to exit of \`--version\` (the loader and the runtime, no config), median of 11; $label | \`Benchmarks/lean.sh\` | $base ms | blackbox_exporter $bb_floor ms | $(python3 -c "print(round($base / max($bb_floor, 0.1), 1))") |"
  echo "| start-up to the first answered /metrics at 1,000 sources, median of 11; $label | \`Benchmarks/startup.py\` | $start ms | blackbox_exporter $bb_start ms (Debian's example modules) | $(python3 -c "print(round($start / max($bb_start, 1), 1))") (goal ≤ 2) |"
  echo "| the floor: start-up of \`lookout-floor\` to its first answered /metrics at 1,000 sources, median of 11; $label | \`Benchmarks/startup.py\` | $floor_start ms | blackbox_exporter $bb_start ms | $(python3 -c "print(round($floor_start / max($bb_start, 1), 1))") |"
done
