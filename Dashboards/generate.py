#!/usr/bin/env python3
"""Writes Dashboards/lookout-overview.json: `python3 Dashboards/generate.py`.

The dashboard is built for 10 to 10,000 sources: variables for the data source, job, instance,
group and source; top-N, heatmaps and counts instead of a line per source; a unit on every panel;
`max by (source)` before any sum, so replicas of one shard count once. `make test` parses every
query with promtool and runs each against a real Prometheus scraping a running Lookout.
"""
import json
import os
DS = {"type": "prometheus", "uid": "${datasource}"}
S = 'job=~"$job", instance=~"$instance"'
SRC = S + ', source=~"$source"'
INFO = 'lookout_source_info{job=~"$job", group=~"$group"}'
RI = "$__rate_interval"
W24 = 'window="24h"'
W5 = 'window="5m"'
OPEN = 'state=~"open|half_open|forced_open"'
Q50 = 'quantile="0.5"'
Q95 = 'quantile="0.95"'

def f(metric, extra=""):
    """A per-source selector narrowed to the chosen sources and group."""
    sel = SRC + (", " + extra if extra else "")
    return f'({metric}{{{sel}}} and on (source) {INFO})'

panels = []
nid = [0]
def panel(title, kind, unit, targets, x, y, w, h, desc, **extra):
    nid[0] += 1
    p = {"id": nid[0], "title": title, "type": kind, "description": desc, "datasource": DS,
         "gridPos": {"x": x, "y": y, "w": w, "h": h},
         "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
         "targets": [dict({"refId": chr(65 + i), "datasource": DS}, **t) for i, t in enumerate(targets)]}
    p.update(extra)
    panels.append(p)
def row(title, y):
    nid[0] += 1
    panels.append({"id": nid[0], "type": "row", "title": title, "collapsed": False, "gridPos": {"x": 0, "y": y, "w": 24, "h": 1}, "panels": []})

stat = {"options": {"reduceOptions": {"calcs": ["lastNotNull"]}, "colorMode": "value", "graphMode": "none"}}
inst = {"instant": True, "range": False}
row("Overview", 0)
panel("Sources up", "stat", "none", [
    {"expr": f'count(max by (source) {f("lookout_probe_success")} == 1) or vector(0)', "legendFormat": "up"},
    {"expr": f'count(max by (source) {f("lookout_probe_success")})', "legendFormat": "configured"}],
    0, 1, 4, 4, "Sources whose last probe succeeded, of those probed (max by source: replicas count once).", **stat)
panel("Sources down", "stat", "none", [
    {"expr": f'count(max by (source) {f("lookout_probe_success")} == 0) or vector(0)', "legendFormat": "down"}],
    4, 1, 4, 4, "Sources whose last probe failed.", **stat)
panel("Availability (24h)", "stat", "percentunit", [
    {"expr": f'avg(max by (source) {f("lookout_availability_ratio", W24)})', "legendFormat": "24h"}],
    8, 1, 4, 4, "Mean over the chosen sources of each one's successful probes ÷ probes over 24 h.", **stat)
panel("Alerts firing", "stat", "none", [
    {"expr": f'sum(max by (alertname, severity) (lookout_alerts_firing{{{S}}})) or vector(0)', "legendFormat": "firing"}],
    12, 1, 4, 4, "Lookout's own alert rules, firing now.", **stat)
panel("Network online", "stat", "none", [
    {"expr": f'min(lookout_network_online{{{S}}})', "legendFormat": "online"}],
    16, 1, 4, 4, "0 while an instance's own network is down (its per-source results are held back).",
    **dict(stat, fieldConfig={"defaults": {"unit": "none", "mappings": [{"type": "value", "options": {"0": {"text": "offline"}, "1": {"text": "online"}}}]}, "overrides": []}))
panel("Partial failures (15m)", "stat", "percentunit", [
    {"expr": f'max(lookout_partial_failure_ratio{{{S}}})', "legendFormat": "partial"}],
    20, 1, 4, 4, "Share of the last 15 one-minute rounds in which some but not all sources failed.", **stat)

row("What is broken", 5)
panel("Worst error rate (5m, top 10)", "bargauge", "percentunit", [
    dict({"expr": f'topk(10, max by (source) {f("lookout_error_ratio", W5)})', "legendFormat": "{{source}}"}, **inst)],
    0, 6, 8, 9, "The ten chosen sources with the highest share of failed probes over 5 minutes.",
    options={"orientation": "horizontal", "displayMode": "basic", "reduceOptions": {"calcs": ["lastNotNull"]}})
panel("Sources down now", "table", "none", [
    dict({"expr": f'max by (source) {f("lookout_probe_http_status_code")} and on (source) (max by (source) {f("lookout_probe_success")} == 0)', "format": "table", "legendFormat": "{{source}}"}, **inst)],
    8, 6, 8, 9, "Each source whose last probe failed, with the HTTP status of its last answer (0: none arrived).",
    transformations=[{"id": "organize", "options": {"renameByName": {"Value": "HTTP status"}, "excludeByName": {"Time": True}}}])
panel("Firing alerts", "table", "none", [
    dict({"expr": f'max by (alertname, severity, source) (lookout_alert_active{{{S}}})', "format": "table"}, **inst)],
    16, 6, 8, 9, "Every firing alert with its source (empty for service-wide rules).",
    transformations=[{"id": "organize", "options": {"excludeByName": {"Time": True, "Value": True}}}])

row("Errors, retries and breakers", 15)
panel("Probes and failures", "timeseries", "ops", [
    {"expr": f'sum(max by (source) (rate(lookout_probes_total{{{SRC}, result="failure"}}[{RI}]) and on (source) {INFO}))', "legendFormat": "failed probes/s"},
    {"expr": f'sum(max by (source, result) (rate(lookout_probes_total{{{SRC}}}[{RI}]) and on (source) {INFO}))', "legendFormat": "probes/s"}],
    0, 16, 8, 8, "Probes finished per second over the chosen sources, and those that failed.")
panel("Errors by category", "timeseries", "ops", [
    {"expr": f'sum by (category) (max by (source, category, reason) (rate(lookout_errors_total{{{SRC}}}[{RI}]) and on (source) {INFO}))', "legendFormat": "{{category}}"}],
    8, 16, 8, 8, "Failed attempts per second by failure category (retries included).")
panel("Retries", "timeseries", "ops", [
    {"expr": f'sum by (category) (max by (source, category) (rate(lookout_retries_total{{{SRC}}}[{RI}]) and on (source) {INFO}))', "legendFormat": "{{category}}"}],
    16, 16, 8, 8, "Retries made per second, by the category of the failure retried.")
panel("Breakers open", "timeseries", "none", [
    {"expr": f'count(max by (source) {f("lookout_circuit_breaker_state", OPEN)} == 1) or vector(0)', "legendFormat": "open"}],
    0, 24, 8, 8, "Sources whose circuit breaker holds calls back (open, half-open or forced open).")
panel("Breaker openings (1h, top 10)", "bargauge", "none", [
    dict({"expr": f'topk(10, max by (source) (increase(lookout_circuit_breaker_opens_total{{{SRC}}}[1h]) and on (source) {INFO}))', "legendFormat": "{{source}}"}, **inst)],
    8, 24, 8, 8, "The sources whose breaker opened most often in the last hour: flapping upstreams.",
    options={"orientation": "horizontal", "displayMode": "basic", "reduceOptions": {"calcs": ["lastNotNull"]}})
panel("Retry success (15m)", "timeseries", "percentunit", [
    {"expr": f'avg(max by (source) {f("lookout_retry_success_ratio")})', "legendFormat": "retried calls that then succeeded"}],
    16, 24, 8, 8, "Of the calls retried, the share that then succeeded (mean over sources that retried).")

row("Latency", 32)
panel("Latency heatmap", "heatmap", "s", [
    {"expr": f'sum by (le) (max by (source, le) (rate(lookout_probe_duration_seconds_bucket{{{SRC}}}[{RI}]) and on (source) {INFO}))', "format": "heatmap", "legendFormat": "{{le}}"}],
    0, 33, 8, 8, "One attempt's latency, all chosen sources together, from its buckets. Only with metrics: {detail: full}.",
    options={"calculate": False, "yAxis": {"unit": "s"}})
panel("Latency p50 / p95 (median over sources)", "timeseries", "s", [
    {"expr": f'quantile(0.5, max by (source) {f("lookout_probe_latency_seconds", Q50)})', "legendFormat": "p50"},
    {"expr": f'quantile(0.5, max by (source) {f("lookout_probe_latency_seconds", Q95)})', "legendFormat": "p95"}],
    8, 33, 8, 8, "One attempt's latency as the status page shows it (the last 64 attempts of each source), the median over the chosen sources; retries and backoff waits are not latency.")
panel("Slowest sources (p95, top 10)", "bargauge", "s", [
    dict({"expr": f'topk(10, max by (source) {f("lookout_probe_latency_seconds", Q95)})', "legendFormat": "{{source}}"}, **inst)],
    16, 33, 8, 8, "The ten chosen sources with the slowest p95 latency, as their status page rows show it.",
    options={"orientation": "horizontal", "displayMode": "basic", "reduceOptions": {"calcs": ["lastNotNull"]}})

row("Downloads, notifications and Lookout itself", 41)
panel("Download throughput", "timeseries", "Bps", [
    {"expr": f'max by (source) {f("lookout_download_throughput_bytes_per_second")}', "legendFormat": "{{source}}"}],
    0, 42, 6, 8, "Bytes per second of each download source's last transfer.")
panel("Notifications", "timeseries", "ops", [
    {"expr": f'sum by (hook, result) (rate(lookout_alert_notifications_total{{{S}}}[{RI}]))', "legendFormat": "{{hook}} {{result}}"}],
    6, 42, 6, 8, "Notification attempts per second by hook and result.")
panel("Outbox pending", "timeseries", "none", [
    {"expr": f'max by (hook) (lookout_alert_outbox_pending{{{S}}})', "legendFormat": "{{hook}}"}],
    12, 42, 6, 8, "Notifications waiting to be delivered, per hook.")
panel("Database size", "timeseries", "bytes", [
    {"expr": f'max by (instance) (lookout_db_size_bytes{{{S}}})', "legendFormat": "{{instance}}"}],
    18, 42, 6, 8, "The SQLite file and its WAL, per instance.")
panel("Database write p95", "timeseries", "s", [
    {"expr": f'histogram_quantile(0.95, sum by (instance, le) (rate(lookout_db_write_duration_seconds_bucket{{{S}}}[{RI}])))', "legendFormat": "{{instance}}"}],
    0, 50, 8, 8, "How long the writer's batched transactions take.")
panel("Late probe starts", "timeseries", "percentunit", [
    {"expr": f'sum by (instance) (rate(lookout_scheduler_late_starts_total{{{S}}}[{RI}])) / sum by (instance) (rate(lookout_scheduler_probes_started_total{{{S}}}[{RI}]))', "legendFormat": "{{instance}}"}],
    8, 50, 8, 8, "Share of scheduled probes that started more than 1 s after their tick (above 1%: the instance is overloaded).")
panel("Resident memory", "timeseries", "bytes", [
    {"expr": f'max by (instance) (process_resident_memory_bytes{{{S}}})', "legendFormat": "{{instance}}"}],
    16, 50, 8, 8, "Each instance's resident memory.")

row("Source drill-down: $source", 58)
panel("Availability by window", "timeseries", "percentunit", [
    {"expr": f'max by (source, window) {f("lookout_availability_ratio")}', "legendFormat": "{{source}} {{window}}"}],
    0, 59, 8, 8, "Choose one source (or a few) above.")
panel("Error rate by window", "timeseries", "percentunit", [
    {"expr": f'max by (source, window) {f("lookout_error_ratio")}', "legendFormat": "{{source}} {{window}}"}],
    8, 59, 8, 8, "Failed probes ÷ probes over 1m and 5m (15m and 1h too with metrics: {detail: full}).")
panel("Phases of the last probe", "timeseries", "s", [
    {"expr": f'max by (source, phase) {f("lookout_probe_phase_seconds")}', "legendFormat": "{{source}} {{phase}}"}],
    16, 59, 8, 8, "DNS, connect, TLS, time to first byte and transfer of the last probe's final attempt. Only with metrics: {detail: full} in Lookout's config (left out by default to keep 15 series a source).")
panel("Breaker state", "state-timeline", "none", [
    {"expr": f'max by (source, state) {f("lookout_circuit_breaker_state")} == 1', "legendFormat": "{{source}} {{state}}"}],
    0, 67, 12, 8, "The breaker's state over time.")
panel("Errors by reason", "timeseries", "ops", [
    {"expr": f'max by (source, category, reason) (rate(lookout_errors_total{{{SRC}}}[{RI}]) and on (source) {INFO})', "legendFormat": "{{source}} {{category}}/{{reason}}"}],
    12, 67, 12, 8, "Failed attempts per second by category and reason.")

CUR = 'period="current"'
row("SLA", 75)
panel("SLA downtime budget left (least 20)", "bargauge", "percentunit", [
    dict({"expr": f'bottomk(20, max by (source) {f("lookout_sla_budget_remaining_ratio")})', "legendFormat": "{{source}}"}, **inst)],
    0, 76, 12, 10, "Of each sla source's downtime budget for its current period, the share left (0 or less: spent; SLABudgetExhausted fires). The 20 with the least left. Evidence: /sla.",
    options={"orientation": "horizontal", "displayMode": "gradient", "reduceOptions": {"calcs": ["lastNotNull"]}},
    fieldConfig={"defaults": {"unit": "percentunit", "min": -1, "max": 1, "thresholds": {"mode": "absolute", "steps": [
        {"color": "red", "value": None}, {"color": "orange", "value": 0}, {"color": "green", "value": 0.5}]}}, "overrides": []})
panel("SLA uptime this period (lowest 20)", "bargauge", "percentunit", [
    dict({"expr": f'bottomk(20, max by (source) {f("lookout_sla_uptime_ratio", CUR)})', "legendFormat": "{{source}}"}, **inst)],
    12, 76, 12, 10, "Uptime by the SLA measure over each source's current period so far (time Lookout was not running is left out), the 20 lowest.",
    options={"orientation": "horizontal", "displayMode": "basic", "reduceOptions": {"calcs": ["lastNotNull"]}},
    fieldConfig={"defaults": {"unit": "percentunit", "decimals": 3}, "overrides": []})

def var(name, label, query, **extra):
    v = {"name": name, "label": label, "type": "query", "datasource": DS, "definition": query,
         "query": {"query": query, "refId": name}, "refresh": 2, "includeAll": True, "multi": True,
         "allValue": ".*", "current": {"text": "All", "value": "$__all"}, "sort": 1}
    v.update(extra)
    return v
dashboard = {
    "uid": "lookout-overview", "title": "Lookout overview", "schemaVersion": 39, "version": 2, "editable": True,
    "refresh": "30s", "time": {"from": "now-6h", "to": "now"}, "tags": ["lookout"],
    "description": "Lookout at 10 to 10,000 sources: top-N and heatmaps instead of a line per source; max by (source) so replicas count once.",
    "templating": {"list": [
        {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus", "current": {}, "hide": 0},
        var("job", "Job", "label_values(lookout_build_info, job)"),
        var("instance", "Instance", 'label_values(lookout_build_info{job=~"$job"}, instance)'),
        var("group", "Group", 'label_values(lookout_source_info{job=~"$job"}, group)'),
        var("source", "Source", 'label_values(lookout_source_info{job=~"$job", group=~"$group"}, source)'),
    ]},
    "annotations": {"list": []},
    "panels": panels,
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lookout-overview.json")
with open(path, "w") as out:
    json.dump(dashboard, out, indent=2, ensure_ascii=False)
    out.write("\n")
