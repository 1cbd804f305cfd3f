#!/usr/bin/env bash
# Two shards of one config, plus a second replica of shard 0 (an HA pair), all alerting to one
# Alertmanager: Prometheus scrapes every instance (deploy/prometheus.yml, job lookout-shards),
# Alertmanager deduplicates the pair's identical alerts.
#   examples/sharded/run.sh   (after `make build`; Ctrl-C stops everything)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="$(swift build --show-bin-path)"
mkdir -p run/sharded
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true' INT TERM EXIT
"$bin/lookout-sim" --listen 127.0.0.1:9480 & pids+=($!)
"$bin/lookout" serve --config examples/sharded/lookout.yml --shard 0/2 --replica a --listen 127.0.0.1:9465 --db run/sharded/shard0.sqlite & pids+=($!)
"$bin/lookout" serve --config examples/sharded/lookout.yml --shard 1/2 --listen 127.0.0.1:9466 --db run/sharded/shard1.sqlite & pids+=($!)
"$bin/lookout" serve --config examples/sharded/lookout.yml --shard 0/2 --replica b --listen 127.0.0.1:9467 --db run/sharded/shard0-replica.sqlite & pids+=($!)
echo "shard 0: http://127.0.0.1:9465/  shard 1: http://127.0.0.1:9466/  shard 0 replica: http://127.0.0.1:9467/"
wait -n "${pids[@]}"
