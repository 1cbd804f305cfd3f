#!/usr/bin/env bash
# Writes Sources/lookout/lookout.order: the functions a running `lookout serve` executes, hottest
# first, for lld's --symbol-ordering-file (Package.swift). Laid out together, the code a monitor
# runs fills a few MiB of pages instead of being spread over the binary's 23 MB of text, where
# the kernel maps the pages around each one it runs (resident memory at 100 sources, static
# build: 42.3 → 37.6 MiB). The workload is close to the one `Benchmarks/lean.sh` measures (100
# sources on lookout-sim probed every second, one of them a JSON document and one refused), with
# /metrics, the status page and the API asked, for 40 s under Valgrind's callgrind, which counts
# every function that runs: sampling would miss the cold ones, and each of those costs as many
# pages as a hot one. A name the code no longer has is skipped by the linker, so a stale file
# costs memory, never correctness; `lean.sh` prints how much of it the binary still has. SwiftPM
# does not relink when the file changes, so the release binaries are removed at the end. Run it
# after large changes: `make link-order`.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
swift build -c release --product lookout --static-swift-stdlib --scratch-path .build-static >/dev/null
swift build -c release --product lookout-sim >/dev/null
# Valgrind cannot read the DWARF Swift writes; the symbols are all it needs.
strip --strip-debug -o "$work/lookout" .build-static/release/lookout

sport=$(free_port)
.build/release/lookout-sim --listen "127.0.0.1:$sport" >"$work/sim.log" 2>&1 & pids+=($!)
wait_for "http://127.0.0.1:$sport/ok"

port=$(free_port)
{
  sources_config "$port" "$work/order.sqlite" 1s 98 s "http://127.0.0.1:$sport/ok"
  echo "  - {name: json, url: \"http://127.0.0.1:$sport/json/valid\"}"
  echo "  - {name: refused, url: \"http://127.0.0.1:$(free_port)/\"}"
} >"$work/order.yml"

valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" \
  "$work/lookout" serve --config "$work/order.yml" >"$work/serve.log" 2>&1 &
vpid=$!
pids+=("$vpid")
healthy=false
for _ in $(seq 600); do
  if curl -sf "http://127.0.0.1:$port/-/healthy" >/dev/null; then healthy=true; break; fi
  sleep 0.1
done
if ! $healthy; then
  echo "link-order: lookout did not answer within 60 s under valgrind:" >&2
  tail -20 "$work/serve.log" >&2
  exit 1
fi
for _ in 1 2 3 4; do
  for path in /metrics / /api/v1/sources/s1 /api/v1/alerts /-/ready; do
    curl -sf -o /dev/null "http://127.0.0.1:$port$path" || true
  done
  sleep 10
done
kill -INT "$vpid"
wait "$vpid" || true

# Each function of the binary's own object by its own instruction count, hottest first. Callgrind
# names a recursive call's cycle `name'2`: those are the function itself.
python3 - "$work/callgrind.out" >"$work/lookout.order" <<'PY'
import re, sys
names, objects, cost = {}, {}, {}
current_object, current, call = "", None, False
for line in open(sys.argv[1]):
    if match := re.match(r"c?ob=\((\d+)\)(?: (.*))?$", line):
        if match[2]: objects[match[1]] = match[2].strip()
        if line.startswith("ob="): current_object = objects.get(match[1], "")
    elif match := re.match(r"c?fn=\((\d+)\)(?: (.*))?$", line):
        if match[2]: names[match[1]] = match[2].strip()
        if line.startswith("fn="):
            current = match[1] if current_object.endswith("/lookout") else None
            if current: cost.setdefault(current, 0)
    elif line.startswith("calls="):
        call = True  # the next cost line is the call's inclusive cost, not this function's own
    elif match := re.match(r"(?:[+-]?\d+|\*) (\d+)", line):
        if current and not call: cost[current] += int(match[1])
        call = False
by_name = {}
for key, instructions in cost.items():
    name = re.sub(r"'\d+$", "", names[key])
    if not name.startswith("0x") and "(" not in name:
        by_name[name] = by_name.get(name, 0) + instructions
for name, _ in sorted(by_name.items(), key=lambda item: -item[1]):
    print(name)
PY
# A run that went wrong writes a short list: keep the file there is.
count=$(wc -l <"$work/lookout.order")
if [ "$count" -lt 1000 ]; then
  echo "link-order: only $count functions ran; Sources/lookout/lookout.order is left as it was" >&2
  exit 1
fi
mv "$work/lookout.order" Sources/lookout/lookout.order
rm -f .build/release/lookout .build-static/release/lookout
echo "Sources/lookout/lookout.order: $count functions"
