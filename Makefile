# Lookout — `make run` starts the demo, `make test` runs every test. Both install what is missing.
SHELL := /bin/bash
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Build dependencies: the C libraries Lookout links, and pkg-config to find them.
APT_BUILD := libre2-dev libpsl-dev libcurl4-openssl-dev libmicrohttpd-dev libsqlite3-dev libssl-dev zlib1g-dev libldns-dev libtcmalloc-minimal4 pkg-config
# Test tools: Prometheus (promtool), Alertmanager, blackbox_exporter and nginx for end-to-end tests;
# iproute2 and openssl for fault and TLS tests.
APT_TEST := curl prometheus prometheus-alertmanager prometheus-blackbox-exporter nginx-light chromium iproute2 openssl systemd python3-aiosmtpd python3-grpcio python3-feedparser dnsmasq-base
# From PyPI: kubernetes-validate, which carries the Kubernetes schemas the manifests are checked
# against (installed into .build/pydeps, outside any system Python).
PYPI_TEST := kubernetes-validate==1.37.0
PYDEPS := .build/pydeps
# Benchmark peers and load tools.
APT_BENCH := nginx-light wrk prometheus prometheus-blackbox-exporter curl python3

# Installs the Debian packages in $(1) that are not installed yet.
define ensure_packages
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

.PHONY: deps test-deps bench-deps build run test lint format fuzz bench link-order clean

deps:
	$(call ensure_packages,$(APT_BUILD))

test-deps: deps
	$(call ensure_packages,$(APT_TEST))
	@[ -d $(PYDEPS)/kubernetes_validate ] || { echo "make: installing $(PYPI_TEST)"; python3 -m pip install -q --disable-pip-version-check --target $(PYDEPS) $(PYPI_TEST); }

bench-deps: deps
	$(call ensure_packages,$(APT_BENCH))

build: deps
	$(SWIFT) build

run: build
	./examples/run-demo.sh

test: test-deps lint
	$(SWIFT) build
	$(SWIFT) build --build-tests
	LOOKOUT_BIN_DIR="$$($(SWIFT) build --show-bin-path)" LOOKOUT_PYDEPS="$(CURDIR)/$(PYDEPS)" ./Tests/in-own-session.sh $(SWIFT) test --skip-build
	FUZZ_SECONDS=30 SWIFT=$(SWIFT) ./Tests/Fuzz/run.sh

# The code as .swift-format lays it out (4-space indent, 160 columns); `make format` rewrites it so.
lint:
	$(SWIFT) format lint --strict --recursive --parallel Sources Tests Benchmarks Package.swift

format:
	$(SWIFT) format format --in-place --recursive --parallel Sources Tests Benchmarks Package.swift

# Every libFuzzer target for FUZZ_SECONDS (default 600) or FUZZ_RUNS executions each, two at a
# time, e.g. `make fuzz FUZZ_SECONDS=3600 FUZZ_RUNS=10000000` or `make fuzz FUZZ_TARGETS=config`.
FUZZ_SECONDS ?= 600
FUZZ_RUNS ?= -1
FUZZ_TARGETS ?= config alert-expression values feed json-path server-wait server-message http-request peer-status template probe-answer vendor-page conversation regex cron rdap flow blackbox-file
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_TARGETS="$(FUZZ_TARGETS)" SWIFT=$(SWIFT) ./Tests/Fuzz/run.sh

bench: bench-deps
	./Benchmarks/run.sh

# Sources/lookout/lookout.order: the functions the service runs, hottest first, which lld lays
# out together (Package.swift). Measured under Valgrind's callgrind; redo after large changes.
link-order: deps
	$(call ensure_packages,valgrind curl python3)
	./Benchmarks/link-order.sh

clean:
	rm -rf .build .build-fuzz run
