#!/usr/bin/env bash
# Regular expressions as blackbox files write them (issue "Regular expressions as
# blackbox_exporter reads them…"), as `make bench` rows; run alone with `./Benchmarks/regex.sh`.
# /probe of lookout-sim's /text answering 5,000 × "a" then "!" with the two catastrophic patterns
# of the issue and a 200,001-byte body, through both exporters from one blackbox file: the median
# of 5 wall times per call (curl's time_total), and Lookout's CPU left busy 2 s after the last one.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
[ -n "${bin:-}" ] || build_release
sport=$(free_port)
"$bin/lookout-sim" --listen "127.0.0.1:$sport" >"$work/sim.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$sport/ok"
cat > "$work/blackbox.yml" <<'YAML'
modules:
  nested: {prober: http, timeout: 5s, http: {fail_if_body_matches_regexp: ["(a+)+$"]}}
  repeated: {prober: http, timeout: 5s, http: {fail_if_body_matches_regexp: ["(.*a){25}$"]}}
  alternation: {prober: http, timeout: 5s, http: {fail_if_body_not_matches_regexp: ["^(a|b)*!$"]}}
YAML
bport=$(free_port)
prometheus-blackbox-exporter --config.file="$work/blackbox.yml" --web.listen-address="127.0.0.1:$bport" >"$work/bb.log" 2>&1 &
pids+=($!)
lport=$(free_port)
printf 'listen: 127.0.0.1:%s\ndatabase: ":memory:"\nprobe_modules_file: %s/blackbox.yml\nprobe_allow: ["http://127\\\\.0\\\\.0\\\\.1:[0-9]+/.*"]\nsources:\n  - {name: sim, url: "http://127.0.0.1:%s/ok", interval: 1h}\n' \
  "$lport" "$work" "$sport" > "$work/lookout.yml"
"$bin/lookout" serve --config "$work/lookout.yml" >"$work/lookout.log" 2>&1 &
lpid=$!
pids+=($lpid)
wait_for "http://127.0.0.1:$bport/-/healthy"
wait_for "http://127.0.0.1:$lport/-/healthy"
call() {  # $1: exporter port, $2: module, $3: target query; prints the median wall time in ms
  local times=()
  for _ in 1 2 3 4 5; do
    times+=("$(curl -s -o /dev/null -w '%{time_total}' --max-time 30 "http://127.0.0.1:$1/probe?module=$2&target=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$3")")")
  done
  python3 -c "import statistics, sys; print(round(statistics.median(float(v) for v in sys.argv[1:]) * 1000, 1))" "${times[@]}"
}
five="http://127.0.0.1:$sport/text?repeat=a&count=5000&then=%21"
long="http://127.0.0.1:$sport/text?repeat=ab&count=100000&then=%21"
for row in "nested;(a+)+\$ on 5,000 a then !;$five" "repeated;(.*a){25}\$ on 5,000 a then !;$five" "alternation;^(a|b)*!\$ on 200,001 bytes;$long"; do
  IFS=';' read -r module label target <<< "$row"
  ours=$(call "$lport" "$module" "$target")
  theirs=$(call "$bport" "$module" "$target")
  shown=${label//|/\\|}
  echo "| /probe, \`${shown%% on *}\` on ${shown#* on } | curl time_total, median of 5 | $ours ms | blackbox_exporter $theirs ms | $(python3 -c "print(round($ours / max(0.1, $theirs), 2))") |"
done
cpu0=$(cpu_ticks "$lpid"); sleep 2; cpu1=$(cpu_ticks "$lpid")
echo "| CPU left busy after the regex calls | /proc, 2 s after the last call | $(python3 -c "print(round(($cpu1 - $cpu0) / $(getconf CLK_TCK) / 2 * 100, 1))") % of a core | – | – |"
