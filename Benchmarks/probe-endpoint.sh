#!/usr/bin/env bash
# /probe beside /probe: the CPU each exporter spends per request on the same module and target,
# driven by wrk at its /probe for 5 s (3 rounds, median), for a plain GET, for a TLS target
# (a full handshake per probe: neither keeps connections or sessions), for a TCP connection and
# for a DNS question (lookout-sim's authoritative zone). The same blackbox file
# serves both: Lookout reads it with probe_modules_file. `make bench` runs it (Benchmarks/run.sh
# appends its rows); `Benchmarks/probe-endpoint.sh` alone prints them. All on loopback: nginx
# (plain and TLS, start_nginx's certificate) as the target. Beside the TLS rows, two floors from
# C: libcurl's transfers alone (curl-floor.c) and a /probe served as Lookout serves it
# (probe-floor.c): what Lookout adds over the second is its own code.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
build_release

port=$(free_port)
tls_port=$(free_port)
start_nginx "$port" "$tls_port"
dns_port=$(free_port)
"$bin/lookout-sim" --listen "127.0.0.1:$(free_port)" --dns-listen "127.0.0.1:$dns_port" >"$work/sim.log" 2>&1 & pids+=($!)

cat > "$work/blackbox.yml" <<CONF
modules:
  http_2xx: {prober: http, timeout: 5s}
  https_2xx: {prober: http, timeout: 5s, http: {tls_config: {ca_file: "$work/cert.pem"}}}
  https_system_ca: {prober: http, timeout: 5s}
  tcp_connect: {prober: tcp, timeout: 5s}
  dns_a: {prober: dns, timeout: 5s, dns: {query_name: ok.lookout.test, query_type: A}}
CONF
bport=$(free_port)
prometheus-blackbox-exporter --config.file="$work/blackbox.yml" --web.listen-address="127.0.0.1:$bport" --log.level=error & bpid=$!; pids+=($bpid)
lport=$(free_port)
printf 'listen: 127.0.0.1:%s\ndatabase: ":memory:"\nprobe_modules_file: %s\nsources:\n  - {name: idle, url: "http://127.0.0.1:%s/", interval: 1h}\n' \
  "$lport" "$work/blackbox.yml" "$port" > "$work/lookout.yml"
"$bin/lookout" serve --config "$work/lookout.yml" >"$work/serve.log" 2>&1 & lpid=$!; pids+=($lpid)
# The floor of a /probe served as Lookout serves it, from C (Benchmarks/probe-floor.c):
# libmicrohttpd's epoll thread hands each request to a libcurl multi thread and back.
${CC:-clang} -O2 -o "$work/probe-floor" Benchmarks/probe-floor.c $(pkg-config --cflags --libs libcurl libmicrohttpd) -lpthread
${CC:-clang} -O2 -o "$work/curl-floor" Benchmarks/curl-floor.c $(pkg-config --cflags --libs libcurl)
fport=$(free_port)
"$work/probe-floor" "$fport" "$work/cert.pem" >"$work/probe-floor.log" 2>&1 & fpid=$!; pids+=($fpid)
wait_for "http://127.0.0.1:$bport/-/healthy"
wait_for "http://127.0.0.1:$lport/-/healthy"
wait_for "http://127.0.0.1:$fport/probe?target=http://127.0.0.1:$port/"

# round PID EXPORTER_PORT TARGET MODULE: probes/s and CPU µs per probe of that exporter.
round() {
  drain_time_wait
  local before after rate
  before=$(cpu_ticks "$1")
  rate=$(wrk -t2 -c32 -d5s "http://127.0.0.1:$2/probe?target=$3&module=$4" | awk '/Requests\/sec/ {print $2}')
  after=$(cpu_ticks "$1")
  python3 -c "print(round(($after - $before) / $(getconf CLK_TCK) / ($rate * 5) * 1e6, 1))"
}

# PROBE_KINDS="tls" times only those rows.
for kind in ${PROBE_KINDS:-plain tls tls-system tcp dns}; do
  expect=1
  case $kind in
    plain) target="127.0.0.1:$port"; module=http_2xx; what="a plain GET" ;;
    tls) target="https://127.0.0.1:$tls_port/"; module=https_2xx; what="an HTTPS GET (full TLS handshake each)" ;;
    tls-system) target="https://127.0.0.1:$tls_port/"; module=https_system_ca; expect=0
      what="an HTTPS GET checked against the system's CA store (the certificate is not in it: both fail verification)" ;;
    tcp) target="127.0.0.1:$port"; module=tcp_connect; what="a TCP connection (tcp prober)" ;;
    dns) target="127.0.0.1:$dns_port"; module=dns_a; what="a DNS question over UDP (dns prober)" ;;
  esac
  # Both answer the same way before they are timed.
  curl -s "http://127.0.0.1:$lport/probe?target=$target&module=$module" | grep -q "^probe_success $expect" || { echo "Lookout's /probe failed for $target" >&2; exit 1; }
  curl -s "http://127.0.0.1:$bport/probe?target=$target&module=$module" | grep -q "^probe_success $expect" || { echo "blackbox's /probe failed for $target" >&2; exit 1; }
  lk=(); bb=(); pf=(); floor=(); over=(); over_pf=()
  for _ in 1 2 3; do
    lk+=("$(round "$lpid" "$lport" "$target" "$module")")
    bb+=("$(round "$bpid" "$bport" "$target" "$module")")
    if [ "$kind" = tls ]; then
      pf+=("$(round "$fpid" "$fport" "$target" "$module")")
      # The floor under any libcurl prober: the same HTTPS GETs from C through libcurl alone
      # (Benchmarks/curl-floor.c, Lookout's options and CA cache), no /probe served around them.
      # In the same round as Lookout's: this host's speed drifts between rounds by more than the
      # goal's 10 %, so the goal's figure is the median of each round's own ratio.
      drain_time_wait
      floor+=("$("$work/curl-floor" "$target" 3000 32 "$work/cert.pem" | awk '{print $1}')")
      over+=("$(python3 -c "print(round((${lk[-1]} - ${floor[-1]}) / ${floor[-1]} * 100))")")
      over_pf+=("$(python3 -c "print(round((${lk[-1]} - ${pf[-1]}) / ${pf[-1]} * 100))")")
    fi
  done
  l=$(median "${lk[@]}"); b=$(median "${bb[@]}")
  if [ "$kind" = tls ]; then
    f=$(median "${floor[@]}")
    echo "| CPU per HTTPS GET through libcurl alone from C (OpenSSL 3's full handshake each, Lookout's options and CA cache; no /probe around it), 3 rounds: ${floor[*]} µs | \`curl-floor https://... 3000 32 cert.pem\` | $f µs | blackbox_exporter's whole /probe $b µs | libcurl alone ÷ blackbox $(python3 -c "print(round($f / $b, 2))") |"
    p=$(median "${pf[@]}")
    echo "| CPU per HTTPS /probe served as Lookout serves it, from C (libmicrohttpd's epoll thread, suspended to one libcurl multi thread and resumed; no Swift, none of Lookout's code), 3 rounds: ${pf[*]} µs | \`probe-floor PORT cert.pem\` under the same wrk | $p µs | libcurl alone $f µs | over libcurl alone $(python3 -c "print(f'{($p - $f) / $f * 100:+.0f} %')") |"
    echo "| what Lookout's HTTPS /probe adds over libcurl alone (goal ≤ 10 %), and over the C /probe floor, each round against its own floors: ${over[*]} % and ${over_pf[*]} % | the rows above | Lookout $l µs | libcurl alone $f µs, C /probe floor $p µs | median $(median "${over[@]}" | awk '{printf "%+.0f", $1}') % over libcurl alone, $(median "${over_pf[@]}" | awk '{printf "%+.0f", $1}') % over the C floor |"
  fi
  echo "| CPU per /probe request, $what, same blackbox module (32 in flight, 3 × 5 s): Lookout ${lk[*]} µs, blackbox_exporter ${bb[*]} µs | \`wrk -t2 -c32 -d5s .../probe?target=...&module=$module\` at each | Lookout $l µs | blackbox_exporter $b µs | Lookout ÷ blackbox $(python3 -c "print(round($l / $b, 2))") |"
done
