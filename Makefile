# liqo-relay. Two commands set everything up on a fresh machine:
#   make demo   an in-process federation of three relays, on loopback, unprivileged
#   make test   installs what the tests need, then unit, race and e2e tests
SHELL := /bin/bash
GO ?= go
BIN := bin/relay
# VERSION: the one release version (build/version.sh): the tag vX.Y.Z on
# HEAD as X.Y.Z, else 0.0.0-<commit>. The binary, the image's tags and
# labels, the chart's version, appVersion and default image tag, and
# relay_build_info all carry it.
VERSION ?= $(shell build/version.sh)
LDFLAGS = -X github.com/liqo-relay/relay/internal/version.Version=$(VERSION) -X github.com/liqo-relay/relay/internal/version.Commit=$(REVISION) -X github.com/liqo-relay/relay/internal/version.BuildDate=$(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r $(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# go in the real-Liqo lab's tools module (test/liqo/tools), which requires
# Liqo v1.2.0 and its virtual-kubelet fork (the checksum database does not
# know the fork's pseudo-version).
LIQO_GO := GONOSUMDB=github.com/liqotech/virtual-kubelet GOFLAGS=-mod=mod $(GO)
# Debian packages the tests use: ip/tc for namespaces, ping for e2e checks.
# nftables: the e2e failover test cuts a link silently with an nft drop rule.
# openssl: test/k8s/cluster.sh makes the test API servers' certificates.
# jq: the checks of perf/'s analysis and gate on synthetic results.
# test/liqo/lab.sh (the real-Liqo lab) uses ip, nft, openssl, jq and
# sysctl (procps); kube-proxy's nftables mode runs nft.
# busybox: the pod runner's tests run containers of the busybox image as
# the host's busybox (sh, httpd).
TEST_DEBS := iproute2 iputils-ping nftables openssl jq procps busybox

# release: one folder with everything a platform team installs from.
RELEASE_DIR ?= bin/release

.PHONY: all build image release test unit e2e deps demo demo-k8s bench lint fmt vet staticcheck clean generate k8s-tools liqo-tools manifests help
CONTROLLER_GEN := sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0

all: build ## the same as build

# build: the one product binary. Test and perf tools have their own mains
# under perf/ and test/, built by the targets that use them (perf/perf.mk).
build: ## build the one product binary, bin/relay
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/relay

# image: the relay's OCI image without a Docker daemon (build/cmd/image,
# docs/image.md): bin/image/relay-oci.tar, an OCI layout with the
# linux/amd64 and linux/arm64 images under one index, and
# bin/image/relay-docker-linux-ARCH.tar for docker load. Every timestamp is
# SOURCE_DATE_EPOCH, by default the last commit's time, so a rebuild of the
# same commit gives the same bytes.
IMAGE_REPO ?= ghcr.io/liqo-relay/relay
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 1)
image: ## build the relay's OCI images without a Docker daemon (bin/image)
	$(GO) run ./build/cmd/image -out bin/image -repo $(IMAGE_REPO) -version $(VERSION) \
	  -revision $(REVISION) -source-date-epoch $(SOURCE_DATE_EPOCH)

# release: bin/release/VERSION holds what a platform team installs from:
# make image's tarballs, the relay binary for each platform (the one in
# the image), the packaged chart (build/cmd/chartpack) and SHA256SUMS over them (docs/release.md).
# Every timestamp is SOURCE_DATE_EPOCH, so twice on one commit it gives the
# same bytes. A tree that differs from its commit (a -dirty version) and a
# version a chart cannot carry are refused before anything is built; the
# folder appears only once complete.
RELEASE_PLATFORMS := linux/amd64 linux/arm64
space := $(subst ,, )
comma := ,
release: ## the release folder: images, binaries, the packaged chart and SHA256SUMS (bin/release/VERSION)
	@case "$(VERSION)" in ""|*-dirty) echo "release: the tree differs from its commit, or VERSION is empty (version '$(VERSION)'): commit or remove the changes, or set VERSION" >&2; exit 1;; esac
	$(GO) run ./build/cmd/chartpack -check -version $(VERSION)
	rm -rf $(RELEASE_DIR)/.$(VERSION).tmp && mkdir -p $(RELEASE_DIR)/.$(VERSION).tmp
	$(GO) run ./build/cmd/image -out $(RELEASE_DIR)/.$(VERSION).tmp -repo $(IMAGE_REPO) -version $(VERSION) \
	  -revision $(REVISION) -source-date-epoch $(SOURCE_DATE_EPOCH) -platforms $(subst $(space),$(comma),$(RELEASE_PLATFORMS))
	@for p in $(RELEASE_PLATFORMS); do d=$${p%/*}-$${p#*/}; \
	  mv $(RELEASE_DIR)/.$(VERSION).tmp/$$d/relay $(RELEASE_DIR)/.$(VERSION).tmp/relay-$$d && rmdir $(RELEASE_DIR)/.$(VERSION).tmp/$$d || exit 1; done
	$(GO) run ./build/cmd/chartpack -chart manifests/chart/liqo-relay -out $(RELEASE_DIR)/.$(VERSION).tmp \
	  -version $(VERSION) -source-date-epoch $(SOURCE_DATE_EPOCH)
	cd $(RELEASE_DIR)/.$(VERSION).tmp && sha256sum $$(ls | grep -vx SHA256SUMS) > SHA256SUMS
	rm -rf $(RELEASE_DIR)/$(VERSION) && mv $(RELEASE_DIR)/.$(VERSION).tmp $(RELEASE_DIR)/$(VERSION)

# deps installs what the tests need. It is idempotent and quiet when all is there.
deps: ## install the Debian packages and Go modules the tests need
	@missing=""; for p in $(TEST_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "installing:$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing Debian packages:$$missing (run as root to install; e2e tests will skip)"; fi; \
	fi
	$(GO) mod download

# test: every package with the race detector, its output as plain go test
# prints it (ok/FAIL lines, failed tests' output) through test/cmd/testsummary,
# which then says how many tests skipped for lack of root (run as an
# ordinary user, the namespace tests skip: that is not a full run). First,
# the simulated mesh's package without the race detector, for the seeds
# that -race leaves out (internal/testbed/sim raceEnabled),
# without the race detector, so that the summary's root-skip count is the
# last thing printed. Both runs always run; pipefail keeps go test's exit
# status, and the target fails with the race run's status, else the seeds'.
# perf-check (no root, a minute or two) goes first: the benchmark scripts' analysis
# and gate on synthetic results. As root, Liqo is built for the real-Liqo lab
# test (test/liqo); a failed build fails in CI and, elsewhere, leaves that
# test to skip with a message. The lab's tools module (test/liqo/tools, its
# own module, which ./... does not reach) is tested beside the seeds.
test: deps build k8s-tools perf-check ## everything the tests need, then every test (unit, race, namespaces, API servers, real Liqo as root)
	$(GO) build -o bin/testsummary ./test/cmd/testsummary
	@if [ "$$(id -u)" != 0 ]; then echo "not root: Liqo is not built (the real-Liqo lab test skips)"; \
	elif ! test/liqo/lab.sh build; then \
	  if [ -n "$$CI" ]; then echo "building Liqo for the real-Liqo lab failed"; exit 1; fi; \
	  echo "warning: building Liqo failed: the real-Liqo lab test will skip"; fi
	set -o pipefail; seeds=0; tools=0; \
	$(GO) test -count=1 -timeout 10m ./internal/testbed/sim/ || seeds=$$?; \
	(cd test/liqo/tools && $(LIQO_GO) test -race -count=1 -timeout 10m ./...) || tools=$$?; \
	$(GO) test -race -count=1 -timeout 20m -json ./... | bin/testsummary || exit $$?; \
	[ $$seeds = 0 ] || exit $$seeds; exit $$tools

unit: ## the short tests only, with the race detector
	$(GO) test -race -count=1 -short ./...

# e2e runs only the namespace tests (root). They are part of `make test` too.
e2e: deps build k8s-tools ## the network-namespace end-to-end tests only (root)
	$(GO) test -race -count=1 -timeout 20m -run 'E2E' -v ./test/e2e/...

demo: build ## an in-process federation of three relays on loopback, unprivileged
	./$(BIN) demo

# demo-k8s (root): the operator and the relays end to end on real API servers. A consumer and
# two providers (their kube-apiservers, Liqo's data path modelled in
# network namespaces, a relay in each provider's gateway pod, `relay
# operator` in the consumer), one ForeignClusterConnection, and `kubectl
# get fcc` as the direct link is cut; then everything is
# removed. test/e2e TestDemoK8s drives it (docs/operator.md, "Demo").
demo-k8s: deps k8s-tools ## the operator and relays on real API servers, a cut and a restore (root)
	@if [ "$$(id -u)" != 0 ]; then echo "make demo-k8s needs root (network namespaces)"; exit 1; fi
	set -o pipefail; LIQO_RELAY_DEMO_K8S=1 $(GO) test -count=1 -timeout 10m -run '^TestDemoK8s$$' -v ./test/e2e/ \
	  | grep --line-buffered -v -E '^(=== RUN|--- PASS|PASS$$|ok )|cluster .* up in'

# bench runs every benchmark once, briefly (a few minutes in all), one
# package at a time so that benchmarks do not compete for the CPU. The TUN
# pair (test/bench) needs root and compares with stock wireguard-go, which it
# configures with wg(8): BENCH_DEBS are installed when root. For figures to
# quote, use test/bench/rounds.sh (interleaved rounds, medians); see
# docs/performance.md.
BENCH_DEBS := wireguard-tools
bench: deps ## every Go benchmark once, briefly, one package at a time
	@if [ "$$(id -u)" = 0 ] && ! dpkg -s $(BENCH_DEBS) >/dev/null 2>&1; then \
	  echo "installing: $(BENCH_DEBS)"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BENCH_DEBS) >/dev/null; fi
	$(GO) test -p 1 -run '^$$' -bench . -benchmem -benchtime 1s -timeout 15m ./internal/... ./test/...

lint: fmt vet staticcheck ## gofmt, go vet and staticcheck

fmt: ## fail when a Go file needs gofmt
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: ## go vet, in the main and the real-Liqo tools module
	$(GO) vet ./...
	cd test/liqo/tools && $(LIQO_GO) vet ./...

staticcheck: ## staticcheck over the main module
	$(GO) run $(STATICCHECK) ./...

# generate writes the deep-copy code of api/ and the CRDs in manifests/crds.
# A test (api/v1alpha1) fails when the committed files differ.
generate: ## regenerate api/'s deep copies and manifests/crds
	$(GO) run $(CONTROLLER_GEN) object paths=./api/... crd:allowDangerousTypes=true output:crd:artifacts:config=manifests/crds

# manifests writes what manifests/ generates (build/manifestgen): the chart's
# copies of the CRDs and of the RBAC rules (manifests/crds and
# manifests/rbac stay the one source; the chart's templates read the rules
# from files/rbac), the kustomize
# bases manifests/kustomize/{consumer,provider} from the chart (helm
# template), and the Liqo gateway templates with the relay in
# manifests/liqo-template from Liqo's examples (test/fixtures/liqo-v1.2.0).
# The tests of manifests/ fail when the committed files differ.
manifests: k8s-tools ## regenerate what manifests/ derives: the chart's CRDs and RBAC, kustomize, Liqo templates
	rm -f manifests/chart/liqo-relay/crds/*.yaml && cp manifests/crds/*.yaml manifests/chart/liqo-relay/crds/
	rm -f manifests/chart/liqo-relay/files/rbac/*.yaml && cp manifests/rbac/*.yaml manifests/chart/liqo-relay/files/rbac/
	$(GO) run ./build/cmd/manifests -helm "$$(test/k8s/cluster.sh bin)/helm"

# k8s-tools builds the real kube-apiserver, etcd, kubectl and helm that the
# Kubernetes tests run (once per machine, cached outside the repo).
k8s-tools: ## build kube-apiserver, etcd, kubectl and helm (cached outside the repo)
	test/k8s/cluster.sh build

# liqo-tools builds what the real-Liqo lab (test/liqo/lab.sh) runs: Liqo
# v1.2.0's binaries and chart from its Go module (once per machine, about
# 3 minutes after the Kubernetes tools, cached outside the repo).
liqo-tools: k8s-tools ## build Liqo v1.2.0's binaries and chart for the real-Liqo lab (cached)
	test/liqo/lab.sh build

clean: ## remove bin/
	rm -rf bin

# help prints every target of this Makefile and perf/perf.mk with the
# description after its "##" (a test in internal/layoutcheck fails on a
# target without one).
help: ## list the targets
	@awk -F':.*## ' '/^[a-z][a-z0-9-]*:.*## / { printf "  %-13s %s\n", $$1, $$2 }' Makefile perf/perf.mk
include perf/perf.mk
