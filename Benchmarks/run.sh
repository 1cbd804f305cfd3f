#!/usr/bin/env bash
# `make bench`: builds release binaries, starts a local nginx, runs every benchmark on loopback and
# writes Benchmarks/RESULTS.md. Figures that depend on the machine sit beside a reference from
# the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product lookout-bench >/dev/null
swift build -c release --product lookout >/dev/null
bin="$(swift build -c release --show-bin-path)"
source Benchmarks/lib.sh

# nginx on a free loopback port, answering a small body with Connection: close semantics left to the client.
port=$(free_port)
start_nginx "$port"

rows="$work/rows.md"
worst() { python3 -c "import sys; print(max(float(v) for v in sys.argv[1:]))" "$@"; }
"$bin/lookout-bench" decisions >> "$rows"
"$bin/lookout-bench" store >> "$rows"
"$bin/lookout-bench" status >> "$rows"
# /metrics per detail, healthy and failing sources, and gzipped as Prometheus asks for it.
"$bin/lookout-bench" metrics >> "$rows"
# History over 400 simulated days: size per week and per tier, extrapolated to 10,000 sources.
"$bin/lookout-bench" history 5 400 >> "$rows"
"$bin/lookout-bench" sla 10000 12 >> "$rows"
drain_time_wait
"$bin/lookout-bench" probes "http://127.0.0.1:$port/" 20000 64 >> "$rows"
# The same GETs from C through libcurl alone (Benchmarks/curl-floor.c, Lookout's options): the
# part no libcurl prober avoids, most of it the kernel's work for a fresh loopback connection at
# both ends. Both run at once, three rounds, so the host's drift between runs falls on both alike.
${CC:-clang} -O2 -o "$work/curl-floor" Benchmarks/curl-floor.c $(pkg-config --cflags --libs libcurl)
drain_time_wait
floor_all=(); client_all=(); over_all=()
for round in 1 2 3; do
  "$work/curl-floor" "http://127.0.0.1:$port/" 20000 32 > "$work/floor-$round" & floor_pid=$!
  client=$("$bin/lookout-bench" probes "http://127.0.0.1:$port/" 20000 32 | awk -F'|' '/CPU per fresh-connection probe/ {gsub(/[^0-9.]/, "", $4); print $4}')
  wait $floor_pid
  read -r floor floor_user floor_system floor_failed < "$work/floor-$round"
  [ "$floor_failed" = 0 ] || { echo "curl-floor: $floor_failed transfers failed" >&2; exit 1; }
  floor_all+=("$floor"); client_all+=("$client")
  over_all+=("$(python3 -c "print(round($client / $floor, 2))")")
done
echo "| CPU per fresh-connection GET, side by side (32 in flight each, 3 rounds): libcurl alone from C (Lookout's options) ${floor_all[*]} µs; Lookout's resilient client ${client_all[*]} µs | \`curl-floor URL 20000 32\` beside \`lookout-bench probes URL 20000 32\` | $(median "${floor_all[@]}") µs libcurl alone | Lookout's client $(median "${client_all[@]}") µs | Lookout ÷ libcurl alone, median of the rounds' ${over_all[*]}: $(median "${over_all[@]}") |" >> "$rows"

# The ceiling: wrk straight at nginx, one request per connection.
ceiling=$(wrk -t2 -c64 -d5s -H 'Connection: close' "http://127.0.0.1:$port/" | awk '/Requests\/sec/ {print $2}')
echo "| nginx ceiling, fresh connection per request | \`wrk -t2 -c64 -d5s -H 'Connection: close'\` | ${ceiling%.*} /s | | |" >> "$rows"

# blackbox_exporter probing the same nginx, driven through its /probe endpoint by wrk; its CPU is
# read from /proc before and after.
bport=$(free_port)
cat > "$work/blackbox.yml" <<CONF
modules:
  http_2xx:
    prober: http
    timeout: 5s
CONF
prometheus-blackbox-exporter --config.file="$work/blackbox.yml" --web.listen-address="127.0.0.1:$bport" --log.level=error &
bpid=$!
pids+=($bpid)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$bport/-/healthy" >/dev/null && break; sleep 0.1; done

# One blackbox_exporter measurement: wrk at /probe for 5 s; prints probes/s and CPU µs per probe.
blackbox_round() {
  drain_time_wait
  local before after rate
  before=$(cpu_ticks "$bpid")
  rate=$(wrk -t2 -c64 -d5s "http://127.0.0.1:$bport/probe?target=127.0.0.1:$port&module=http_2xx" | awk '/Requests\/sec/ {print $2}')
  after=$(cpu_ticks "$bpid")
  python3 -c "print($rate, round(($after - $before) / $(getconf CLK_TCK) / ($rate * 5) * 1e6, 1))"
}

# One scheduler measurement: `lookout serve` with 5,000 sources (or $2) every second against the
# same nginx, on a fresh database; probes started and late starts come from its /metrics, CPU from
# /proc; every result finished is recorded (rows written plus rows queued, none dropped).
# Prints probes/s, % late, CPU s per 1,000 probes, results recorded, finished and dropped.
sources=${LOOKOUT_BENCH_SOURCES:-5000}
serve_round() {
  local lport spid count=${2:-$sources}
  lport=$(free_port)
  {
    echo "listen: 127.0.0.1:$lport"
    echo "database: $work/bench-$1.sqlite"
    echo "defaults: {interval: 1s, timeout: 2s, rate_limit: {rate: 100/s, burst: 100}}"
    echo "sources:"
    for i in $(seq 1 "$count"); do echo "  - {name: s$i, url: \"http://127.0.0.1:$port/s/$i\"}"; done
  } > "$work/bench.yml"
  drain_time_wait
  "$bin/lookout" serve --config "$work/bench.yml" >"$work/serve-$1.log" 2>&1 &
  spid=$!
  pids+=($spid)
  metric() { curl -s "http://127.0.0.1:$lport/metrics" | awk -v name="$1" '$1 == name {print $2}'; }
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$lport/-/healthy" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$lport/-/healthy" >/dev/null || return 1
  sleep 5  # every source has started its schedule
  local started0 late0 cpu0 t0 started1 late1 cpu1 t1
  started0=$(metric lookout_scheduler_probes_started_total); late0=$(metric lookout_scheduler_late_starts_total)
  cpu0=$(cpu_ticks "$spid"); t0=$(date +%s.%N)
  sleep 20
  started1=$(metric lookout_scheduler_probes_started_total); late1=$(metric lookout_scheduler_late_starts_total)
  cpu1=$(cpu_ticks "$spid"); t1=$(date +%s.%N)
  # Every finished probe is a raw row, written or queued: compare with the probes counted.
  curl -s "http://127.0.0.1:$lport/metrics" > "$work/scrape-$1.txt"
  kill "$spid"; wait "$spid" 2>/dev/null || true
  python3 - "$work/scrape-$1.txt" <<PY
import sys
finished = recorded = dropped = 0
for line in open(sys.argv[1]):
    if line.startswith('lookout_probes_total{'): finished += float(line.split()[-1])
    elif line.startswith('lookout_db_rows{tier="raw"}') or line.startswith('lookout_db_pending_records '): recorded += float(line.split()[-1])
    elif line.startswith('lookout_db_records_dropped_total '): dropped = float(line.split()[-1])
started = $started1 - $started0
elapsed = $t1 - $t0
cpu = ($cpu1 - $cpu0) / $(getconf CLK_TCK)
print(round(started / elapsed), round(100 * ($late1 - $late0) / max(1, started), 2), round(cpu / started * 1000, 3), int(recorded), int(finished), int(dropped))
PY
}

# The host's load moves both figures, and not by the same factor: three rounds, each
# blackbox_exporter then Lookout back to back, and the median of each figure and of the
# rounds' ratios is reported, with every round's ratio beside it.
bb_rates=(); bb_cpus=(); lk_rates=(); lk_lates=(); lk_cpus=(); ratios=(); recorded_all=(); dropped_total=0
for round in 1 2 3; do
  # Run in this shell, not in $(…): the serve's pid stays in `pids` for the cleanup trap.
  blackbox_round > "$work/blackbox-$round.txt"
  read -r rate cpu < "$work/blackbox-$round.txt"
  bb_rates+=("$rate"); bb_cpus+=("$cpu")
  serve_round "$round" > "$work/round-$round.txt"
  read -r srate late cpu_k recorded finished dropped < "$work/round-$round.txt"
  [ -n "$dropped" ] || { echo "round $round of lookout serve gave no figures: $work/serve-$round.log" >&2; cat "$work/serve-$round.log" >&2; exit 1; }
  lk_rates+=("$srate"); lk_lates+=("$late"); lk_cpus+=("$cpu_k")
  ratios+=("$(python3 -c "print(round($cpu_k / ($cpu / 1000), 2))")")
  recorded_all+=("$recorded of $finished")
  dropped_total=$((dropped_total + dropped))
done
bb=$(median "${bb_rates[@]}")
bb_cpu=$(median "${bb_cpus[@]}")
bb_cpu_k=$(python3 -c "print(round($bb_cpu / 1000, 3))")
lk_rate=$(awk -F'|' '/fresh-connection probes per second/ {gsub(/[^0-9.]/, "", $4); print $4}' "$rows")
lk_cpu=$(awk -F'|' '/CPU per fresh-connection probe/ {gsub(/[^0-9.]/, "", $4); print $4}' "$rows")
echo "| blackbox_exporter probes per second (64 /probe requests in flight), median of 3 | \`wrk -t2 -c64 -d5s .../probe?target=nginx\` | ${bb%.*} /s | Lookout ${lk_rate} /s | Lookout ÷ blackbox $(python3 -c "print(round($lk_rate / $bb, 2))") |" >> "$rows"
echo "| blackbox_exporter CPU per probe (its /probe serving included), median of 3: ${bb_cpus[*]} µs | same | ${bb_cpu} µs | Lookout ${lk_cpu} µs | Lookout ÷ blackbox $(python3 -c "print(round($lk_cpu / $bb_cpu, 2))") |" >> "$rows"
rate=$(median "${lk_rates[@]}")
late_pct=$(worst "${lk_lates[@]}")
echo "| lookout serve: scheduled fresh-connection probes per second ($sources sources every 1 s), median of 3 | \`lookout serve\` on a generated config, 20 s | ${rate%.*} /s | target ≥ $sources /s | $(python3 -c "print(round($rate / $sources, 2))") |" >> "$rows"
echo "| lookout serve: results recorded (raw rows written or queued ÷ probes finished, at the end of each round) | same | $(IFS=';'; echo "${recorded_all[*]}") | $dropped_total dropped | |" >> "$rows"
echo "| lookout serve: probes started more than 1 s late, worst of 3 | same | $late_pct % | target < 1 % | |" >> "$rows"
echo "| lookout serve: CPU seconds per 1,000 probes (SQLite writes and /metrics included), median of 3: ${lk_cpus[*]} s | same | $(median "${lk_cpus[@]}") s | blackbox_exporter $bb_cpu_k s | Lookout ÷ blackbox, median of the rounds' ${ratios[*]}: $(median "${ratios[@]}") |" >> "$rows"

# Both tools scheduled, as their users run them: the same number of sources every 1 s. wrk above
# drives blackbox_exporter at saturation, where Go amortises the most; here Prometheus scrapes its
# /probe once per target per second, as a blackbox_exporter deployment does. 1,000 targets keep it
# on schedule here with room to spare beside Prometheus and nginx (at 2,000 its scrapes time out),
# and `lookout serve` runs the same number of sources. Prints probes/s, CPU µs per probe and the
# targets up.
scheduled=${LOOKOUT_BENCH_SCHEDULED:-1000}
prometheus_round() {
  local pport ppid b0 b1 p0 p1 r0 r1 t0 t1 ok
  pport=$(free_port)
  {
    echo "global: {scrape_interval: 1s, scrape_timeout: 1s}"
    echo "scrape_configs:"
    echo "  - job_name: blackbox"
    echo "    metrics_path: /probe"
    echo "    params: {module: [http_2xx]}"
    echo "    relabel_configs:"
    echo "      - {source_labels: [__address__], target_label: __param_target}"
    echo "      - {source_labels: [__param_target], target_label: instance}"
    echo "      - {target_label: __address__, replacement: 127.0.0.1:$bport}"
    echo "    static_configs:"
    echo "      - targets:"
    for i in $(seq 1 "$scheduled"); do echo "        - http://127.0.0.1:$port/s/$i"; done
  } > "$work/prometheus.yml"
  drain_time_wait
  prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb-$1" \
    --web.listen-address="127.0.0.1:$pport" --log.level=error 2>"$work/prometheus-$1.log" &
  ppid=$!
  pids+=($ppid)
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$pport/-/ready" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$pport/-/ready" >/dev/null || { echo "prometheus did not start:" >&2; cat "$work/prometheus-$1.log" >&2; return 1; }
  sleep 8  # every target has been scraped
  served() {
    local count
    count=$(curl -sf "http://127.0.0.1:$port/nginx-status" | awk 'NR == 3 {print $3}')
    [[ "$count" =~ ^[0-9]+$ ]] || { echo "nginx's stub_status gave no request count" >&2; return 1; }
    echo "$count"
  }
  r0=$(served); b0=$(cpu_ticks "$bpid"); p0=$(cpu_ticks "$ppid"); t0=$(date +%s.%N)
  sleep 20
  r1=$(served); b1=$(cpu_ticks "$bpid"); p1=$(cpu_ticks "$ppid"); t1=$(date +%s.%N)
  # Targets whose last probe succeeded: blackbox_exporter answered and nginx did.
  ok=$(curl -sf "http://127.0.0.1:$pport/api/v1/query" --data-urlencode 'query=sum(probe_success)' \
    | python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(int(float(r[0]["value"][1])) if r else 0)')
  kill "$ppid"; wait "$ppid" 2>/dev/null || true
  # The status request between the two counts is one of them.
  python3 -c "
probes = $r1 - $r0 - 1
tick = $(getconf CLK_TCK)
print(round(probes / ($t1 - $t0)), round(($b1 - $b0) / tick / probes * 1e6, 1), round(($p1 - $p0) / tick / probes * 1e6, 1), $ok)"
}
pm_rates=(); pm_cpus=(); pm_prom=(); pm_oks=(); sk_rates=(); sk_lates=(); sk_cpus=(); sk_ratios=(); sk_dropped=0
for round in 1 2 3; do
  prometheus_round "$round" > "$work/prometheus-$round.txt"
  read -r rate cpu prom_cpu ok < "$work/prometheus-$round.txt"
  pm_rates+=("$rate"); pm_cpus+=("$cpu"); pm_prom+=("$prom_cpu"); pm_oks+=("$ok")
  serve_round "scheduled-$round" "$scheduled" > "$work/scheduled-$round.txt"
  read -r srate late cpu_k recorded finished dropped < "$work/scheduled-$round.txt"
  [ -n "$dropped" ] || { echo "round $round of lookout serve gave no figures:" >&2; cat "$work/serve-scheduled-$round.log" >&2; exit 1; }
  sk_rates+=("$srate"); sk_lates+=("$late"); sk_cpus+=("$cpu_k")
  sk_dropped=$((sk_dropped + dropped))
  sk_ratios+=("$(python3 -c "print(round($cpu_k / ($cpu / 1000), 2))")")
done
pm_cpu=$(median "${pm_cpus[@]}")
echo "| blackbox_exporter scheduled: $scheduled targets every 1 s, scraped by Prometheus (probes/s ${pm_rates[*]}, nginx's count; targets succeeding ${pm_oks[*]}), CPU median of 3: ${pm_cpus[*]} µs; Prometheus itself $(median "${pm_prom[@]}") µs a probe more, not counted | \`prometheus\` scraping \`/probe\`, 20 s | $pm_cpu µs per probe | blackbox_exporter under wrk ${bb_cpu} µs | $(python3 -c "print(round($pm_cpu / $bb_cpu, 2))") |" >> "$rows"
echo "| lookout serve scheduled: $scheduled sources every 1 s (probes/s ${sk_rates[*]}; late worst $(worst "${sk_lates[@]}") %; $sk_dropped dropped), CPU median of 3: ${sk_cpus[*]} s per 1,000 | \`lookout serve\`, 20 s | $(median "${sk_cpus[@]}") s per 1,000 probes | blackbox_exporter scheduled $(python3 -c "print(round($pm_cpu / 1000, 3))") s | Lookout ÷ blackbox, median of the rounds' ${sk_ratios[*]}: $(median "${sk_ratios[@]}") |" >> "$rows"

# /probe under the same wrk load as blackbox_exporter's /probe above.
pport=$(free_port)
cat > "$work/probe.yml" <<CONF
listen: 127.0.0.1:$pport
database: ":memory:"
probe_modules:
  http_2xx: {kind: http, timeout: 5s, allow: ["http://127\\\\.0\\\\.0\\\\.1:[0-9]+/.*"]}
sources:
  - {name: nginx, url: "http://127.0.0.1:$port/", interval: 1h}
CONF
"$bin/lookout" serve --config "$work/probe.yml" 2>"$work/probe.log" &
ppid=$!
pids+=($ppid)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$pport/-/healthy" >/dev/null && break; sleep 0.1; done
pcpu0=$(cpu_ticks "$ppid")
lp=$(wrk -t2 -c64 -d5s "http://127.0.0.1:$pport/probe?target=http://127.0.0.1:$port/&module=http_2xx" | awk '/Requests\/sec/ {print $2}')
pcpu1=$(cpu_ticks "$ppid")
lp_cpu=$(python3 -c "print(round(($pcpu1 - $pcpu0) / $(getconf CLK_TCK) / ($lp * 5) * 1e6, 1))")
echo "| \`GET /probe\` requests per second (wrk, 64 connections) | \`wrk -t2 -c64 -d5s .../probe?target=nginx&module=http_2xx\` | ${lp%.*} /s | blackbox_exporter ${bb%.*} /s | $(python3 -c "print(round($lp / $bb, 2))") |" >> "$rows"
echo "| \`GET /probe\` CPU per request | same | ${lp_cpu} µs | blackbox_exporter ${bb_cpu} µs | $(python3 -c "print(round($lp_cpu / $bb_cpu, 2))") |" >> "$rows"
kill "$ppid"; wait "$ppid" 2>/dev/null || true

# Resident memory at 100, 1,000 and 10,000 sources: idle (hourly interval) and probing nginx.
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
bb_rss=$(rss_kib "$bpid")
memory() {  # count interval label
  local mport; mport=$(free_port)
  nginx_sources_config "$port" "127.0.0.1:$mport" "$work/memory-$1-$3.sqlite" "$1" "$2" > "$work/memory.yml"
  "$bin/lookout" serve --config "$work/memory.yml" 2>/dev/null &
  local mpid=$!
  for _ in $(seq 200); do curl -sf "http://127.0.0.1:$mport/-/healthy" >/dev/null && break; sleep 0.1; done
  sleep 12
  local kib; kib=$(rss_kib "$mpid")
  kill "$mpid"; wait "$mpid" 2>/dev/null || true
  echo "| resident memory, $1 sources, $3 | \`lookout serve\`, interval $2, after 12 s | $((kib / 1024)) MiB | blackbox_exporter idle $((bb_rss / 1024)) MiB | $(python3 -c "print(round($kib / $bb_rss, 2))") |" >> "$rows"
}
memory 100 1h idle
memory 100 1s probing
memory 1000 1h idle
memory 1000 1s probing
memory 10000 1h idle
memory 10000 5s probing

# /metrics as Prometheus gets it: `lookout serve` with 10,000 sources probing nginx every 5 s,
# scraped by curl 9 times over HTTP; the median.
sport=$(free_port)
nginx_sources_config "$port" "127.0.0.1:$sport" "$work/scrape.sqlite" 10000 5s > "$work/scrape.yml"
"$bin/lookout" serve --config "$work/scrape.yml" 2>/dev/null &
scpid=$!
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$sport/-/healthy" >/dev/null && break; sleep 0.1; done
sleep 12
scrapes=$(for _ in $(seq 9); do curl -s -o /dev/null -w '%{time_total} %{size_download}\n' "http://127.0.0.1:$sport/metrics"; done)
kill "$scpid"; wait "$scpid" 2>/dev/null || true
read -r scrape_ms scrape_kib <<<"$(echo "$scrapes" | python3 -c "
import sys
rows = [line.split() for line in sys.stdin if line.strip()]
times = sorted(float(t) for t, _ in rows)
print(round(times[len(times) // 2] * 1000, 1), int(rows[-1][1]) // 1024)")"
echo "| \`GET /metrics\` over HTTP, 10000 sources probing every 5 s ($scrape_kib KiB) | \`curl\` 9 times, median | $scrape_ms ms | target < 100 ms (render) | |" >> "$rows"

# Three shards covering 30,000 sources every 30 s (one config, `--shard I/3`), all probing the
# same nginx: each shard's CPU over 30 s, its RSS and its scrape, plain and gzipped.
{
  echo "listen: 127.0.0.1:0"
  echo "defaults: {interval: 30s, timeout: 2s}"
  echo "sources:"
  for i in $(seq 1 30000); do echo "  - {name: t$i, url: \"http://127.0.0.1:$port/t/$i\"}"; done
} > "$work/shards.yml"
shard_pids=(); shard_ports=()
for index in 0 1 2; do
  sp=$(free_port)
  "$bin/lookout" serve --config "$work/shards.yml" --shard "$index/3" --listen "127.0.0.1:$sp" --db "$work/shard-$index.sqlite" 2>/dev/null &
  shard_pids+=($!); pids+=($!); shard_ports+=("$sp")
done
for sp in "${shard_ports[@]}"; do for _ in $(seq 300); do curl -sf "http://127.0.0.1:$sp/-/healthy" >/dev/null && break; sleep 0.1; done; done
sleep 10
declare -a c0
for k in 0 1 2; do c0[$k]=$(cpu_ticks "${shard_pids[$k]}"); done
sleep 30
for k in 0 1 2; do
  c1=$(cpu_ticks "${shard_pids[$k]}")
  kib=$(rss_kib "${shard_pids[$k]}")
  body=$(curl -s "http://127.0.0.1:${shard_ports[$k]}/metrics")
  owned=$(echo "$body" | grep -c '^lookout_probe_success{' || true)
  plain=$(curl -s -o /dev/null -w '%{size_download}' "http://127.0.0.1:${shard_ports[$k]}/metrics")
  gz=$(curl -s -o /dev/null -H 'Accept-Encoding: gzip' -w '%{size_download}' "http://127.0.0.1:${shard_ports[$k]}/metrics")
  cores=$(python3 -c "print(round(($c1 - ${c0[$k]}) / $(getconf CLK_TCK) / 30, 3))")
  echo "| shard $((k + 1)) of 3, 30,000 sources every 30 s ($owned sources probed here) | \`lookout serve --shard $k/3\`, CPU over 30 s | $cores cores, $((kib / 1024)) MiB | scrape $((plain / 1024)) KiB, gzipped $((gz / 1024)) KiB | |" >> "$rows"
done
kill "${shard_pids[@]}" 2>/dev/null; wait "${shard_pids[@]}" 2>/dev/null || true

# Start-up time to the first scrape, 1,000 sources, beside blackbox_exporter's.
lport=$(free_port)
{
  echo "listen: 127.0.0.1:$lport"
  echo "database: $work/startup.sqlite"
  echo "sources:"
  for i in $(seq 1 1000); do echo "  - {name: s$i, url: \"http://127.0.0.1:$port/s/$i\", interval: 1h}"; done
} > "$work/startup.yml"
first_scrape() {  # command... ; prints milliseconds until /metrics answers on the given port
  local url=$1; shift
  python3 - "$url" "$@" <<'PY'
import subprocess, sys, time, urllib.request
url, command = sys.argv[1], sys.argv[2:]
start = time.monotonic()
process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
while True:
    try:
        urllib.request.urlopen(url, timeout=1).read()
        break
    except Exception:
        time.sleep(0.005)
print(round((time.monotonic() - start) * 1000))
process.terminate(); process.wait()
PY
}
lk_start=$(first_scrape "http://127.0.0.1:$lport/metrics" "$bin/lookout" serve --config "$work/startup.yml")
bport2=$(free_port)
bb_start=$(first_scrape "http://127.0.0.1:$bport2/metrics" prometheus-blackbox-exporter --config.file="$work/blackbox.yml" --web.listen-address="127.0.0.1:$bport2")
echo "| start-up to the first scrape (1,000 sources) | \`lookout serve\` until \`/metrics\` answers | $lk_start ms | blackbox_exporter $bb_start ms | $(python3 -c "print(round($lk_start / max(1, $bb_start), 2))") |" >> "$rows"

# /probe beside /probe: CPU per request on the same module, plain and TLS.
./Benchmarks/probe-endpoint.sh >> "$rows"

# Measured truth under load: a 100 ms upstream while 5,000 other sources are probed every second,
# beside the upstream's own clock and blackbox_exporter's reading of it.
./Benchmarks/latency.sh >> "$rows"

# Catastrophic regexes on long bodies beside blackbox_exporter, and the CPU left after them.
bin=$bin ./Benchmarks/regex.sh >> "$rows"

# Push calls and flow steps: CPU per call and per step.
bin=$bin ./Benchmarks/push-flow.sh >> "$rows"

# Memory with a ceiling: 100 failing sources over 10 minutes; 160 concurrent /probe calls of a
# 64 MiB body.
./Benchmarks/memory.sh >> "$rows"

# The process's weight beside blackbox_exporter's: binary and ldd, RSS at 100 and 10,000
# sources, start-up at 1,000, with the Swift runtime shared and linked statically.
./Benchmarks/lean.sh >> "$rows"

# Memory ceilings of the third attack's rows 1, 7 and 8: an alias bomb, vendor pages at and past
# the bound, endless tcp answers.
./Benchmarks/hostile-memory.sh >> "$rows"

{
  echo "# Benchmarks"
  echo
  echo "Written by \`make bench\` on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -r)."
  echo
  echo "| benchmark | command | figure | reference (same run) | ratio |"
  echo "| --- | --- | --- | --- | --- |"
  cat "$rows"
  # The history of earlier rounds stays, below the new table.
  if [ -f Benchmarks/RESULTS.md ] && grep -q '^## History of rounds' Benchmarks/RESULTS.md; then
    echo
    sed -n '/^## History of rounds/,$p' Benchmarks/RESULTS.md
  fi
} > "$work/RESULTS.md"
mv "$work/RESULTS.md" Benchmarks/RESULTS.md
cat Benchmarks/RESULTS.md
