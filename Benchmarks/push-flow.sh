#!/usr/bin/env bash
# Push calls and flow steps (issue "What must call in…"), as `make bench` rows; run alone with
# `./Benchmarks/push-flow.sh`. Release build, loopback only.
#  - CPU per push call: `lookout serve` with 1,000 push sources, wrk POSTing /push/TOKEN round-robin
#    over their tokens for 10 s; CPU from /proc over the requests wrk counted, with how many were
#    taken (200) and how many refused by the per-token limit (429: a flood's cost is part of it).
#  - CPU per flow step: 500 flows of 2 steps against nginx every second beside 1,000 plain
#    sources, each for 20 s, CPU per step beside CPU per plain probe in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
[ -n "${bin:-}" ] || build_release
port=$(free_port)
start_nginx "$port"

# One `lookout serve` of config $1 on port $2; prints its pid once it answers.
serve() {
  "$bin/lookout" serve --config "$1" >"$1.log" 2>&1 &
  local pid=$!
  pids+=($pid)
  wait_for "http://127.0.0.1:$2/-/healthy" || { echo "lookout did not start" >&2; exit 1; }
  echo "$pid"
}

# Push: 1,000 tokens, wrk round-robin over them.
lport=$(free_port)
{
  echo "listen: 127.0.0.1:$lport"
  echo "database: $work/push.sqlite"
  echo "sources:"
  for i in $(seq 1 1000); do echo "  - {name: p$i, kind: push, expect_every: 1h, token: \"\${PUSH_TOKEN_$i}\"}"; done
} > "$work/push.yml"
for i in $(seq 1 1000); do export "PUSH_TOKEN_$i=bench-push-token-$(printf %06d "$i")"; done
cat > "$work/push.lua" <<'LUA'
-- Each thread counts its answers by status; done() adds them up (wrk's threads share nothing).
local threads = {}
setup = function(thread) table.insert(threads, thread) end
local i = 0
ok, limited = 0, 0
request = function()
  i = i + 1
  return wrk.format("POST", string.format("/push/bench-push-token-%06d", (i % 1000) + 1))
end
response = function(status)
  if status == 200 then ok = ok + 1 elseif status == 429 then limited = limited + 1 end
end
done = function()
  local taken, refused = 0, 0
  for _, thread in ipairs(threads) do
    taken = taken + thread:get("ok")
    refused = refused + thread:get("limited")
  end
  io.stderr:write(string.format("%d taken, %d refused with 429\n", taken, refused))
end
LUA
spid=$(serve "$work/push.yml" "$lport")
cpu0=$(cpu_ticks "$spid")
wrk -t1 -c4 -d10s -s "$work/push.lua" "http://127.0.0.1:$lport" >"$work/push-wrk.txt" 2>"$work/push-counts.txt"
cpu1=$(cpu_ticks "$spid")
kill "$spid"; wait "$spid" 2>/dev/null || true
requests=$(awk '/requests in/ {print $1}' "$work/push-wrk.txt")
counts=$(cat "$work/push-counts.txt")
per_call=$(python3 -c "print(round(($cpu1 - $cpu0) / $(getconf CLK_TCK) / max(1, $requests) * 1e6, 1))")
echo "| CPU per push call (1,000 push sources) | wrk POST /push/TOKEN round-robin, 10 s | $per_call µs ($requests calls: $counts) | – | – |"

# Flows beside plain sources, 20 s each.
measure() {  # $1: name, $2: config body lines (file); prints CPU seconds and probes started
  local lport pid started0 started1 cpu0 cpu1
  lport=$(free_port)
  { echo "listen: 127.0.0.1:$lport"; echo "database: $work/$1.sqlite"; echo "defaults: {interval: 1s, timeout: 2s, rate_limit: {rate: 100/s, burst: 100}}"; cat "$2"; } > "$work/$1.yml"
  drain_time_wait
  pid=$(serve "$work/$1.yml" "$lport")
  sleep 5
  started0=$(curl -s "http://127.0.0.1:$lport/metrics" | awk '$1 == "lookout_scheduler_probes_started_total" {print $2}'); cpu0=$(cpu_ticks "$pid")
  sleep 20
  started1=$(curl -s "http://127.0.0.1:$lport/metrics" | awk '$1 == "lookout_scheduler_probes_started_total" {print $2}'); cpu1=$(cpu_ticks "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  python3 -c "print(($cpu1 - $cpu0) / $(getconf CLK_TCK), $started1 - $started0)"
}
{ echo "sources:"; for i in $(seq 1 500); do echo "  - {name: f$i, kind: flow, steps: [{name: a, url: \"http://127.0.0.1:$port/f/$i/a\", capture: {body: {regex: \"(ok)\"}}}, {name: b, url: \"http://127.0.0.1:$port/f/$i/{{body}}\"}]}"; done; } > "$work/flows.body"
{ echo "sources:"; for i in $(seq 1 1000); do echo "  - {name: s$i, url: \"http://127.0.0.1:$port/s/$i\"}"; done; } > "$work/plain.body"
read -r flow_cpu flow_probes <<< "$(measure flows "$work/flows.body")"
read -r plain_cpu plain_probes <<< "$(measure plain "$work/plain.body")"
python3 - <<PY
step = $flow_cpu / max(1, 2 * $flow_probes) * 1e6
probe = $plain_cpu / max(1, $plain_probes) * 1e6
print(f"| CPU per flow step (500 flows × 2 steps every 1 s) | \`lookout serve\`, 20 s, /proc | {step:.1f} µs a step ({int($flow_probes)} runs) | a plain probe {probe:.1f} µs (1,000 sources, same run) | {step / probe:.2f} |")
PY
