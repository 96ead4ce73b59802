# ccmkit: build, test and verify. `make help` lists the targets.
#
# Everything a target needs is built from pinned sources into ./bin on first
# use; nothing has to be installed besides Go.

SHELL := /usr/bin/env bash -o pipefail
GO    ?= go

MODULE  := github.com/ccmkit/ccmkit
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X $(MODULE)/framework.version=$(VERSION) -X $(MODULE)/framework/csi.version=$(VERSION)

BIN   := $(CURDIR)/bin
TOOLS := $(BIN)/tools

GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT         := $(TOOLS)/golangci-lint-$(GOLANGCI_LINT_VERSION)

# One build configuration for what make compiles: static (CGO_ENABLED=0)
# and -trimpath, as the images and `make build` ship the binaries. The
# kube-apiserver build, the CCMs the e2e suite and the cmd tests run, the
# images, docgen, vet, lint and every test binary then share one set of
# compiled packages in the Go build cache, where a configuration each
# compiled the Kubernetes tree once more (minutes on a cold cache). The
# race detector needs cgo: `unit` with RACE=1 turns it back on. Test
# binaries are linked without DWARF (-w: stack traces keep their file and
# line): a link per test package is most of a warm `make unit`.
export CGO_ENABLED ?= 0
export GOFLAGS     ?= -trimpath -ldflags=-w

# Extra `go test` flags, e.g. `make unit GOTESTFLAGS=-v`.
GOTESTFLAGS ?=
# RACE=1 runs the unit tiers with the race detector; `make test` (what CI
# runs) sets it.
RACE ?=

# The build tags of `bench -floor`'s layers (internal/bench/floor): vet
# type-checks every layer, which a build without its tag does not compile.
empty :=
space := $(empty) $(empty)
comma := ,
FLOOR_TAGS := $(subst $(space),$(comma),$(strip $(patsubst internal/bench/floor/layer_%.go,floor_%,$(wildcard internal/bench/floor/layer_*.go))))

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_%-]+:.*## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# `make build` builds the binaries as the images ship them (hack/images):
# static, -trimpath, stripped of the symbol table and DWARF (-s -w: the
# DigitalOcean binary is 77 MB instead of 111), so what you run locally is
# what ships; the e2e suite builds them the same way.
.PHONY: build
build: ## Build every cmd/* binary into bin/, static and stripped as the images ship them (version from git, or VERSION=...).
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(BIN)/ ./cmd/...

# The cloud `make demo` and `make bench` run.
CLOUD ?= digitalocean

# The steps of `make test`, in order. Each runs as its own make and prints
# how long it took (">> test step unit: 412 s"), so CI's log says where its
# time goes.
TEST_STEPS := controlplane nodetools verify vet lint unit promcheck imagetest charttest fuzz e2e

.PHONY: test
test: ## Run every check and test the project has, unit tiers with -race (what CI runs; builds bin/ first).
	@total=0; for step in $(TEST_STEPS); do \
		start=$$(date +%s); \
		$(MAKE) --no-print-directory RACE=1 $$step || exit 1; \
		took=$$(( $$(date +%s) - start )); total=$$(( total + took )); \
		echo ">> test step $$step: $$took s"; \
	done; echo ">> make test: $$total s"

# The CSI node tests (framework/csi/csitest) format and mount real loop
# devices. They need root, /dev/loop-control, e2fsprogs and, for xfs,
# xfsprogs: nodetools installs it, pinned, when it can (root with apt-get);
# elsewhere the tests skip saying why. CI sets CCMKIT_REQUIRE_LOOP=1, which
# turns every such skip into a failure.
XFSPROGS_VERSION := 6.1.0-1

.PHONY: nodetools
nodetools: ## Install what the CSI node tests need (xfsprogs, pinned) when root with apt-get.
	@if command -v mkfs.xfs >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo ">> no mkfs.xfs, and not root with apt-get: the xfs node tests will skip"; exit 0; fi; \
	echo ">> installing xfsprogs $(XFSPROGS_VERSION) for the CSI node tests"; \
	apt-get install -y --no-install-recommends xfsprogs=$(XFSPROGS_VERSION) >/dev/null 2>&1 || \
		{ apt-get update >/dev/null 2>&1; apt-get install -y --no-install-recommends xfsprogs=$(XFSPROGS_VERSION); }

.PHONY: unit
unit: ## Unit, simulator and conformance tests (everything but the e2e suite); RACE=1 adds -race.
	$(if $(RACE),CGO_ENABLED=1) $(GO) test -count=1 $(if $(RACE),-race) $(GOTESTFLAGS) $$($(GO) list ./... | grep -v /test/e2e)

.PHONY: promcheck
promcheck: ## Check the Triton metrics controller's Prometheus job with Prometheus's own config loader (hack/promcheck, its own module).
	cd hack/promcheck && $(GO) test -count=1 ./...

# Container images without Docker (hack/images, its own module, so that
# go-containerregistry stays out of the library's go.mod): one OCI image
# index per cmd/*-cloud-controller-manager and cmd/*-csi-driver (with the
# node's filesystem tools from the Debian packages of
# hack/images/debian.lock, cached in bin/debian-cache) for PLATFORMS,
# written as an OCI layout with an SPDX SBOM under bin/images (digests in
# bin/images/digests.txt); PUSH=<registry> pushes them as
# <registry>/<name>:$(VERSION). docs/install.md.
PLATFORMS ?= linux/amd64,linux/arm64
PUSH      ?=

.PHONY: images
images: ## Build the CCM and CSI driver images into bin/images without Docker (PLATFORMS, VERSION; PUSH=<registry> pushes them).
	cd hack/images && $(GO) run . -root=$(CURDIR) -out=$(BIN)/images -version=$(VERSION) -platforms=$(PLATFORMS) $(if $(PUSH),-push=$(PUSH))

.PHONY: imagetest
imagetest: ## Build every image for the host platform and check it (CCMKIT_IMAGES=bin/images checks `make images` output instead).
	cd hack/images && $(GO) test -count=1 ./...

# The Helm charts (charts/<cloud>-cloud-controller-manager) are rendered
# with the Helm library in test/charts, its own module for the same reason:
# schema-checked values, a server-side dry run against bin/kube-apiserver,
# RBAC equal to examples/manifests/<cloud>/rbac.yaml, and one chart
# installed for real with the CCM running as its ServiceAccount.
.PHONY: charttest
charttest: controlplane ## Render every Helm chart, dry-run apply it to a real kube-apiserver, check its RBAC against the manifests, run one chart's CCM.
	cd test/charts && CCMKIT_E2E=required $(GO) test -count=1 -timeout=10m ./...

# Fuzzing: every Fuzz* target runs FUZZTIME with Go's native fuzzer
# (hack/fuzz.sh); `make unit` already replays the committed seeds. `make
# fuzz FUZZTIME=5m` fuzzes longer; FUZZ=<regexp> picks targets.
FUZZTIME ?= 3s
FUZZ     ?= .

.PHONY: fuzz
fuzz: ## Run every fuzz target FUZZTIME (3s; longer on demand: FUZZTIME=5m FUZZ=<regexp>).
	FUZZTIME=$(FUZZTIME) FUZZ='$(FUZZ)' bash hack/fuzz.sh

# The walk: FuzzResponses replays, for every provider, operation, answer
# and mutation kind, the mutation of every WALK-th member of the answer,
# deterministically (minutes per provider; not in `make test`). One
# package at a time: two walks at once on two cores ran out of loopback
# ports and hit the harness's deadlines, failures that were the machine's.
WALK ?= 5

.PHONY: fuzz-walk
fuzz-walk: ## Walk every member of every cloud answer with FuzzResponses' mutations, deterministically (WALK=5: every fifth member; 1: all).
	CCMKIT_FUZZ_WALK=$(WALK) $(GO) test -p 1 -count=1 -timeout=4h -run '^FuzzResponses$$' ./providers/... ./examples/skeleton/...

# The soak (internal/soak): a control plane, the simulated cloud, two CCM
# replicas under leader election, SOAK_OPS random operations while the
# cloud fails and the leader is killed, then the invariants. `make test`
# runs a short one per cloud in the e2e suite (TestSoak); this is the long
# one, run before each release (docs/reliability.md). CLOUD=all runs every
# cloud in turn.
SOAK_OPS     ?= 500
SOAK_SEED    ?= 1
SOAK_KILLS   ?= 50
SOAK_5XX     ?= 0.2
SOAK_429     ?= 0.05
SOAK_RESETS  ?= 0.02
SOAK_LATENCY ?= 0.05
SOAK_OUT     ?= $(BIN)/soak

.PHONY: soak
soak: controlplane ## Fault-injected soak with leader kills (CLOUD=<cloud>|all, SOAK_OPS, SOAK_SEED, SOAK_KILLS, SOAK_5XX, SOAK_429, SOAK_RESETS, SOAK_LATENCY).
	$(GO) run ./internal/soak/cmd/soak -cloud=$(CLOUD) -ops=$(SOAK_OPS) -seed=$(SOAK_SEED) -kills=$(SOAK_KILLS) \
		-5xx=$(SOAK_5XX) -429=$(SOAK_429) -resets=$(SOAK_RESETS) -latency=$(SOAK_LATENCY) -out=$(SOAK_OUT)

# The e2e suite runs the providers side by side, each on a control plane of
# its own that its scenarios take turns on (docs/testing.md): most of a
# scenario is waiting on the CCM and the API server, so all six lanes at
# once still leave two cores about half idle (140 s instead of 230 s at
# three).
E2E_PARALLEL ?= 6

.PHONY: e2e
e2e: controlplane csi-sidecars ## End-to-end suite: the real CCM binaries vs a real kube-apiserver + etcd and the simulated clouds.
	CCMKIT_E2E=required $(GO) test -count=1 -timeout=30m -parallel=$(E2E_PARALLEL) $(GOTESTFLAGS) ./test/e2e/...

# Each simulator driven by its cloud's own client (OpenStack's from Debian,
# node-triton from npm, doctl...), pinned and installed on first use into
# bin/fidelity: a check before each release, not part of `make test`
# (docs/testing.md "Fidelity").
.PHONY: fidelity
fidelity: ## Drive each simulator with its cloud's own client against bin/cloudsim (FIDELITY="<cloud> ...", default every cloud).
	BIN=$(BIN) bash hack/fidelity.sh $(FIDELITY)

.PHONY: demo
demo: controlplane ## Run a CCM (CLOUD=digitalocean) against a local control plane and a simulated cloud; KEEP=1 leaves it running.
	$(GO) run ./internal/demo -cloud=$(CLOUD) $(if $(KEEP),-keep)

.PHONY: vet
vet: ## go vet, the root module and the nested ones.
	$(GO) vet ./...
	$(GO) vet -tags $(FLOOR_TAGS) ./internal/bench/floor
	cd hack/images && $(GO) vet ./...
	cd test/charts && $(GO) vet ./...
	cd hack/fidelity/brightbox && $(GO) vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint (pinned, built on first use), the root module and the nested ones.
	$(GOLANGCI_LINT) run ./...
	cd hack/images && $(GOLANGCI_LINT) run ./...
	cd test/charts && $(GOLANGCI_LINT) run ./...
	cd hack/fidelity/brightbox && $(GOLANGCI_LINT) run ./...

$(GOLANGCI_LINT):
	@echo ">> building golangci-lint $(GOLANGCI_LINT_VERSION) into $(TOOLS) (first time only, ~2 minutes)"
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS)/golangci-lint $@

# Control-plane binaries for the end-to-end tests, built from source from the
# Go module proxy in hack/'s own module (hack/README.md says why and how to
# bump). Real file targets: built once, rebuilt when hack/go.mod or go.sum
# change. KUBE_VERSION and ETCD_VERSION must match hack/go.mod; the recipes
# check.
KUBE_VERSION := v1.37.1
ETCD_VERSION := v3.7.0

HACK_DEPS    := hack/go.mod hack/go.sum
KUBE_MAJOR    = $(patsubst v%,%,$(word 1,$(subst ., ,$(KUBE_VERSION))))
KUBE_MINOR    = $(word 2,$(subst ., ,$(KUBE_VERSION)))
# Build date = the tag's publication time on the module proxy: fixed per
# version, so builds are reproducible.
KUBE_BUILD_DATE = $(shell cd hack && $(GO) list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)
KUBE_LDFLAGS  = $(strip -s -w $(foreach pkg,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
	-X $(pkg).gitVersion=$(KUBE_VERSION) -X $(pkg).gitMajor=$(KUBE_MAJOR) -X $(pkg).gitMinor=$(KUBE_MINOR) \
	-X $(pkg).gitCommit= -X $(pkg).gitTreeState=clean -X $(pkg).buildDate=$(KUBE_BUILD_DATE)))
ETCD_LDFLAGS := -s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=
# hack-build: output, package, ldflags.
hack-build = mkdir -p $(BIN) && cd hack && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(3)' -o $(1).tmp $(2) && mv $(1).tmp $(1)
# hack-check-version: module, version; fails if hack/go.mod pins another one.
hack-check-version = @grep -qE '^[[:space:]]*$(1) $(2)( |$$)' hack/go.mod || \
	{ echo "hack/go.mod does not pin $(1) $(2): update it or the Makefile (see hack/README.md)"; exit 1; }

.PHONY: controlplane
controlplane: $(BIN)/kube-apiserver $(BIN)/etcd ## Build kube-apiserver and etcd into bin/ (first time ~10 minutes on 2 cores)

.PHONY: kubectl
kubectl: $(BIN)/kubectl ## Build kubectl into bin/ (optional; first time ~4 minutes).

.PHONY: controlplane-smoke
controlplane-smoke: controlplane $(BIN)/kubectl ## Start bin/etcd + bin/kube-apiserver on loopback, check they serve, stop them.
	bash hack/smoke-controlplane.sh $(BIN)

$(BIN)/kube-apiserver: $(HACK_DEPS)
	$(call hack-check-version,k8s.io/kubernetes,$(KUBE_VERSION))
	@echo ">> building kube-apiserver $(KUBE_VERSION) from source into bin/ (first time only: about 10 minutes on 2 cores)"
	$(call hack-build,$@,k8s.io/kubernetes/cmd/kube-apiserver,$(KUBE_LDFLAGS))

$(BIN)/kubectl: $(HACK_DEPS)
	$(call hack-check-version,k8s.io/kubernetes,$(KUBE_VERSION))
	@echo ">> building kubectl $(KUBE_VERSION) from source into bin/ (first time only: about 4 minutes on 2 cores, 1 after kube-apiserver)"
	$(call hack-build,$@,k8s.io/kubernetes/cmd/kubectl,$(KUBE_LDFLAGS))

# The storage half of a cluster, for the CSI end-to-end tests: the
# attach-detach, PV binder and expander controllers of
# kube-controller-manager, the CSI sidecars and the snapshot controller,
# all from hack/go.mod (one build list with kube-apiserver, so the
# Kubernetes tree compiles once). Versions: hack/go.mod (hack/README.md).
CSI_SIDECARS := csi-provisioner csi-attacher csi-resizer csi-snapshotter snapshot-controller
CSI_SIDECAR_PKG_csi-provisioner     := github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner
CSI_SIDECAR_PKG_csi-attacher        := github.com/kubernetes-csi/external-attacher/v4/cmd/csi-attacher
CSI_SIDECAR_PKG_csi-resizer         := github.com/kubernetes-csi/external-resizer/v2/cmd/csi-resizer
CSI_SIDECAR_PKG_csi-snapshotter     := github.com/kubernetes-csi/external-snapshotter/v8/cmd/csi-snapshotter
CSI_SIDECAR_PKG_snapshot-controller := github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller

.PHONY: csi-sidecars
csi-sidecars: $(BIN)/kube-controller-manager $(addprefix $(BIN)/,$(CSI_SIDECARS)) ## Build kube-controller-manager, the CSI sidecars and the snapshot controller into bin/ (first time ~4 minutes after kube-apiserver).

$(BIN)/kube-controller-manager: $(HACK_DEPS)
	$(call hack-check-version,k8s.io/kubernetes,$(KUBE_VERSION))
	@echo ">> building kube-controller-manager $(KUBE_VERSION) from source into bin/ (first time only: about 2 minutes after kube-apiserver)"
	$(call hack-build,$@,k8s.io/kubernetes/cmd/kube-controller-manager,$(KUBE_LDFLAGS))

$(addprefix $(BIN)/,$(CSI_SIDECARS)): $(BIN)/%: $(HACK_DEPS)
	@echo ">> building $* from source into bin/ (first time only: under a minute after kube-apiserver)"
	$(call hack-build,$@,$(CSI_SIDECAR_PKG_$*),-s -w -X main.version=$(shell cd hack && $(GO) list -f '{{.Module.Version}}' $(CSI_SIDECAR_PKG_$*)))

$(BIN)/etcd: $(HACK_DEPS)
	$(call hack-check-version,go.etcd.io/etcd/server/v3,$(ETCD_VERSION))
	@echo ">> building etcd $(ETCD_VERSION) from source into bin/ (first time only: about 2 minutes on 2 cores)"
	$(call hack-build,$@,go.etcd.io/etcd/server/v3,$(ETCD_LDFLAGS))

.PHONY: bench
bench: controlplane csi-sidecars ## Scale scenarios (BENCH_NODES, BENCH_SERVICES, BENCH_LATENCY, BENCH_RUNS), micro-benchmarks and the CSI one (BENCH_CSI_VOLUMES).
	$(GO) test -run='^$$' -bench=. -benchmem $$($(GO) list ./... | grep -v /test/e2e)
	CLOUD=$(CLOUD) $(GO) run ./internal/bench
	CCMKIT_E2E=required $(GO) test -run='^$$' -bench=CSIPVCs -benchtime=1x -timeout=30m -v ./test/e2e/ | grep -E '^(Benchmark|ok|FAIL|--- FAIL)|csi_bench_test

.PHONY: bench-sweep
bench-sweep: controlplane ## The scale bench for every cloud at 100, 1,000 and 5,000 nodes (BENCH_CLOUDS, BENCH_SIZES), then docs/performance.md: hours on 2 cores; resumes where it stopped.
	$(GO) run ./internal/bench -sweep docs/performance/data
	$(MAKE) perf-docs

.PHONY: bench-floor
bench-floor: ## What a CCM costs before it works: the memory of a process linking each layer of one, up to each cloud's (docs/performance.md).
	$(GO) run ./internal/bench -floor

.PHONY: perf-docs
perf-docs: ## Regenerate docs/performance.md's tables and plots from the runs in docs/performance/data.
	$(GO) run ./internal/bench -report docs/performance/data

.PHONY: fmt
fmt: ## gofmt every Go file.
	gofmt -w $$(git ls-files '*.go')

.PHONY: docs
docs: ## Regenerate the reference docs (annotations, config) from the Go structs.
	$(GO) run ./internal/docgen -dir docs

.PHONY: verify
verify: ## Check go.mod is tidy, code is gofmt'ed and generated docs are current.
	$(GO) mod tidy -diff
	cd hack && $(GO) mod tidy -diff
	cd hack/promcheck && $(GO) mod tidy -diff
	cd hack/images && $(GO) mod tidy -diff
	cd test/charts && $(GO) mod tidy -diff
	cd hack/fidelity/brightbox && $(GO) mod tidy -diff
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed (run 'make fmt'):"; echo "$$out"; exit 1; fi
	$(GO) run ./internal/docgen -dir docs -check
	$(GO) run ./internal/bench -report docs/performance/data -check

.PHONY: clean
clean: ## Remove bin/.
	rm -rf $(BIN)
