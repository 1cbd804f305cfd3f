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

# nginx on port $1 answering a small body; /nginx-status counts the requests served.
start_nginx() {
  local port=$1
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
}
CONF
  nginx -c "$work/nginx.conf" -p "$work" &
  pids+=($!)
  wait_for "http://127.0.0.1:$port/"
}

# Release builds of lookout and lookout-sim; sets $bin to their folder.
build_release() {
  swift build -c release --product lookout >/dev/null
  swift build -c release --product lookout-sim >/dev/null
  bin="$(swift build -c release --show-bin-path)"
}
