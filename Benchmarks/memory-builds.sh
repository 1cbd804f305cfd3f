#!/usr/bin/env bash
# Resident memory of several `lookout` builds under the same load, to trace a change in the
# figure: each binary given serves 10,000 sources probing nginx every 5 s (as `make bench`'s
# "10000 sources, probing" row), read after 12 s and 30 s; ROUNDS (2) rounds, builds alternating.
#   Benchmarks/memory-builds.sh /tmp/old/.build/release/lookout .build/release/lookout
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
[ $# -gt 0 ] || { echo "usage: $0 LOOKOUT_BINARY..." >&2; exit 2; }
rss() { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$1/status"; }
port=$(free_port)
start_nginx "$port"
for round in $(seq "${ROUNDS:-2}"); do
  for binary in "$@"; do
    mport=$(free_port)
    nginx_sources_config "$port" "127.0.0.1:$mport" "$work/memory-$round.sqlite" 10000 5s > "$work/memory.yml"
    "$binary" serve --config "$work/memory.yml" 2>/dev/null &
    mpid=$!
    wait_for "http://127.0.0.1:$mport/-/healthy"
    sleep 12; early=$(rss "$mpid")
    sleep 18; late=$(rss "$mpid")
    kill "$mpid"; wait "$mpid" 2>/dev/null || true
    rm -f "$work"/memory-"$round".sqlite*
    echo "round $round, $binary: $early MiB after 12 s, $late MiB after 30 s"
    drain_time_wait
  done
done
