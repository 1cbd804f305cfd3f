#!/usr/bin/env bash
# Starts lookout-sim and `lookout serve` on examples/demo.yml; Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(swift build --show-bin-path)"
mkdir -p run
pids=()
stop() {
  trap - INT TERM EXIT
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT
"$bin/lookout-sim" --listen 127.0.0.1:9480 &
pids+=($!)
"$bin/lookout" serve --config examples/demo.yml &
pids+=($!)
echo
echo "  Lookout demo: status page at http://127.0.0.1:9464/  (metrics at /metrics)"
echo "  Upstream simulator at http://127.0.0.1:9480/  · Ctrl-C stops both"
echo
wait -n "${pids[@]}"
