# ccmkit: build, test and verify. `make help` lists the targets.
#
# Everything a target needs is built from pinned sources into ./bin on first
# use; nothing has to be installed besides Go.

SHELL := /usr/bin/env bash -o pipefail
GO    ?= go

MODULE  := github.com/ccmkit/ccmkit
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X $(MODULE)/framework.version=$(VERSION)

BIN   := $(CURDIR)/bin
TOOLS := $(BIN)/tools

GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT         := $(TOOLS)/golangci-lint-$(GOLANGCI_LINT_VERSION)

# Test flags: `make unit GOTESTFLAGS=-race` for the race detector.
GOTESTFLAGS ?=

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_%-]+:.*## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build every cmd/* binary into bin/ (version from git, or VERSION=...).
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

.PHONY: test
test: verify vet lint unit ## Run every check and test the project has (what CI runs).

.PHONY: unit
unit: ## Unit, simulator and conformance tests.
	$(GO) test -count=1 $(GOTESTFLAGS) ./...

.PHONY: vet
vet: ## go vet.
	$(GO) vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint (pinned, built on first use).
	$(GOLANGCI_LINT) run ./...

$(GOLANGCI_LINT):
	@echo ">> building golangci-lint $(GOLANGCI_LINT_VERSION) into $(TOOLS) (first time only, ~2 minutes)"
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS)/golangci-lint $@

.PHONY: bench
bench: ## Benchmarks: cloud API calls and allocations per operation.
	$(GO) test -run='^$$' -bench=. -benchmem ./...

.PHONY: fmt
fmt: ## gofmt every Go file.
	gofmt -w $$(git ls-files '*.go')

.PHONY: docs
docs: ## Regenerate the reference docs (annotations, config) from the Go structs.
	$(GO) run ./internal/docgen -dir docs

.PHONY: verify
verify: ## Check go.mod is tidy, code is gofmt'ed and generated docs are current.
	$(GO) mod tidy -diff
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed (run 'make fmt'):"; echo "$$out"; exit 1; fi
	$(GO) run ./internal/docgen -dir docs -check

.PHONY: clean
clean: ## Remove bin/.
	rm -rf $(BIN)
