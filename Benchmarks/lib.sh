# Shared by Benchmarks/run.sh and Benchmarks/latency.sh (sourced): a work folder and the pids
# of what the script starts, both cleaned up at exit; a free loopback port; nginx answering "ok".
work="$(mktemp -d)"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# A loopback port nothing listens on.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Waits up to 10 s for URL to answer.
wait_for() { for _ in $(seq 100); do curl -sf "$1" >/dev/null && return 0; sleep 0.1; done; return 1; }

# nginx on port $1 answering a small body; /nginx-status counts the requests served. With $2, a
# TLS server on that port too (a certificate for 127.0.0.1 made here, $work/cert.pem; no session
# cache or tickets, so every probe pays a full handshake).
start_nginx() {
  local port=$1 tls_port=${2:-} tls=""
  if [ -n "$tls_port" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 3 \
      -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
    tls="server { listen 127.0.0.1:$tls_port ssl backlog=4096; ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;
    ssl_session_cache off; ssl_session_tickets off; location / { return 200 \"ok\\n\"; } }"
  fi
  cat > "$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$port backlog=4096;
    location / { return 200 "ok\n"; }
    # Requests served so far: counts blackbox_exporter's probes when Prometheus schedules them.
    location = /nginx-status { stub_status; }
  }
  $tls
}
CONF
  nginx -c "$work/nginx.conf" -p "$work" &
  pids+=($!)
  wait_for "http://127.0.0.1:$port/"
}

# CPU ticks (user + system) a process has used.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# Every fresh connection leaves a TIME_WAIT socket for 60 s, and how full that table is changes
# what the next connect() costs (a port is searched for among them, or the table overflows and
# none is kept). Each CPU-per-probe figure starts from a drained table, so Lookout and
# blackbox_exporter pay for the same kernel state.
drain_time_wait() {
  for _ in $(seq 140); do
    [ "$(ss -tan state time-wait | wc -l)" -lt 1000 ] && return
    sleep 0.5
  done
}

median() { python3 -c "import statistics, sys; print(statistics.median(float(v) for v in sys.argv[1:]))" "$@"; }

# Release builds of lookout and lookout-sim; sets $bin to their folder.
build_release() {
  swift build -c release --product lookout >/dev/null
  swift build -c release --product lookout-sim >/dev/null
  bin="$(swift build -c release --show-bin-path)"
}

# A config served on 127.0.0.1:PORT ($1) with its database at $2: COUNT ($4) sources named
# PREFIX1, PREFIX2, … ($5) at URL?s=1, URL?s=2, … ($6), each probed every INTERVAL ($3).
sources_config() {
  echo "listen: 127.0.0.1:$1"
  echo "database: \"$2\""
  echo "defaults: {interval: $3, timeout: 2s}"
  echo "sources:"
  for i in $(seq 1 "$4"); do echo "  - {name: $5$i, url: \"$6?s=$i\"}"; done
}

# A config of COUNT sources ($4) probing nginx on port $1 every INTERVAL ($5), served on LISTEN
# ($2) with its database at $3: the load of the memory and scrape rows.
nginx_sources_config() {
  echo "listen: $2"
  echo "database: $3"
  echo "defaults: {interval: $5, timeout: 2s, rate_limit: {rate: 100/s, burst: 100}}"
  echo "sources:"
  for i in $(seq 1 "$4"); do echo "  - {name: m$i, url: \"http://127.0.0.1:$1/m/$i\"}"; done
}
