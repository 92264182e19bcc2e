# perf/perf.mk: targets of the WAN testbed (perf/README.md). Included by the
# Makefile. Needs root: the testbed lives in network namespaces.
#   make perf         every scenario, full length (its budgets add up to about 92 minutes, 40 of them the timers rows)
#   make perf-quick   every scenario, short (its budgets add up to about 16 minutes)
#   make perf-down    remove any testbed left behind (perf/testbed.sh down all)
#   make perf-check   syntax of every script, analysis and gate checks on synthetic data (no root)
#   make perf-tools   the testbed's own tools: bin/wanem (perf/cmd/wanem)
# perf and perf-quick build every tool first (untimed), run the scenarios,
# print the table, and end with the gate (perf/gate.sh): non-zero when a
# headline figure misses its target. perf refuses a dirty tree when it
# writes the committed perf/results/ (PERF_RESULTS=DIR writes elsewhere).
PERF_DEBS := iproute2 iputils-ping iperf3 jq curl gnuplot-nox wireguard-tools

.PHONY: perf perf-quick perf-deps perf-down perf-check perf-tools

perf-deps:
	@missing=""; for p in $(PERF_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "installing:$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing Debian packages:$$missing (run as root)"; exit 1; fi; \
	fi

perf: perf-deps build
	./perf/run-all.sh full

perf-quick: perf-deps build
	./perf/run-all.sh quick

perf-tools:
	$(GO) build -trimpath -o bin/wanem ./perf/cmd/wanem

perf-down:
	./perf/testbed.sh down all

perf-check:
	@for f in perf/*.sh perf/scenarios/*.sh perf/analyze/*.sh test/bench/*.sh; do bash -n $$f || exit 1; done
	./perf/analyze/test.sh
	./perf/gate-test.sh
	./perf/wgbuild-test.sh
	./perf/docs.sh --check
