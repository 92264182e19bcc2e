# perf/perf.mk: targets of the WAN testbed (perf/README.md). Included by the
# Makefile. Needs root: the testbed lives in network namespaces.
#   make perf         every scenario, full length (its budgets add up to about 147 minutes: 32 of them the timers rows, 25 the throughput matrix, 12 the soak)
#   make perf-quick   every scenario, short (its budgets add up to about 32 minutes)
#   make perf-down    remove any testbed left behind (perf/testbed.sh down all)
#   make perf-check   syntax of every script, analysis and gate checks on synthetic data (no root)
#   make perf-tools   the testbed's own tools: bin/wanem (perf/cmd/wanem), bin/udpstream (perf/cmd/udpstream),
#                     bin/scale (perf/cmd/scale, the scale and scale-star scenarios' measurement)
#   make soak         the soak (perf/scenarios/soak.sh): SOAK_MINUTES (10) of traffic through link cuts,
#                     SIGHUP reloads and SIGKILLs, sampled for leaks; writes perf/results/soak-full.json
#                     and .png, non-zero when it did not pass. Like perf, it refuses a dirty tree when it
#                     writes the committed perf/results/ (PERF_RESULTS=DIR writes elsewhere).
# perf and perf-quick build every tool first (untimed), run the scenarios,
# print the table, and end with the gate (perf/gate.sh): non-zero when a
# headline figure misses its target. perf refuses a dirty tree when it
# writes the committed perf/results/ (PERF_RESULTS=DIR writes elsewhere).
PERF_DEBS := iproute2 iputils-ping iperf3 jq curl gnuplot-nox wireguard-tools ethtool nftables

.PHONY: perf perf-quick perf-deps perf-down perf-check perf-tools soak

perf-deps: ## install what the perf scenarios need (root)
	@missing=""; for p in $(PERF_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "installing:$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing Debian packages:$$missing (run as root)"; exit 1; fi; \
	fi

perf: perf-deps build ## every perf scenario in full, then the gate (root, about 2.5 hours)
	./perf/run-all.sh full

perf-quick: perf-deps build ## every perf scenario briefly, then the gate (root, about 30 minutes)
	./perf/run-all.sh quick

perf-tools: ## build the perf tools (bin/)
	$(GO) build -trimpath -o bin/wanem ./perf/cmd/wanem
	$(GO) build -trimpath -o bin/udpstream ./perf/cmd/udpstream
	$(GO) build -trimpath -o bin/scale ./perf/cmd/scale

SOAK_MINUTES ?= 10
# The result must carry the commit the soak started from, as run-all.sh's
# full results do: a dirty tree is refused before, a changed one after.
soak: perf-deps build perf-tools ## the soak: load, cuts, reloads and restarts for SOAK_MINUTES (root)
	@bash -c 'source perf/lib.sh && source perf/analyze/common.sh && c=$$(tree_commit) && require_committed_tree "$$c" && \
	  rc=0; RESULT=full SOAK_MINUTES=$(SOAK_MINUTES) PERF_COMMAND="make soak" ./perf/scenarios/soak.sh || rc=$$?; \
	  [ ! -f "$$PERF_RESULTS/soak-full.json" ] || check_result_commit "$$PERF_RESULTS/soak-full.json" "$$c"; \
	  exit $$rc'

perf-down: ## remove whatever a stopped perf run left (namespaces, processes)
	./perf/testbed.sh down all

# perf-check needs jq, which `make deps` installs as root; as an ordinary
# user without it, the syntax checks run and the rest says it skipped.
perf-check: ## test perf/'s analysis and gate on synthetic results
	@for f in perf/*.sh perf/scenarios/*.sh perf/analyze/*.sh test/bench/*.sh; do bash -n $$f || exit 1; done
	@if command -v jq >/dev/null; then \
	  ./perf/analyze/test.sh && ./perf/gate-test.sh && ./perf/wgbuild-test.sh && ./perf/docs.sh --check; \
	elif [ "$$(id -u)" = 0 ]; then echo "perf-check: jq is missing (make deps installs it)"; exit 1; \
	else echo "perf-check: SKIPPED the analysis, gate and docs checks: they need jq (apt-get install jq, or make test as root)"; fi
