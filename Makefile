# msbench: `make run` runs the studies and writes the report; `make test`
# runs every check. Both install what they need first.
SHELL := /bin/bash
GO ?= go
BIN := bin/msbench
# Go modules of the systems under test and of tools, each tested on its own.
SERVICE_MODULES := $(patsubst %/go.mod,%,$(shell find studies tools -name go.mod -not -path '*/node_modules/*' 2>/dev/null))
# Debian packages the tests and studies start or compare against.
DEBIAN_PACKAGES := iproute2 wrk nginx-light postgresql redis-server rabbitmq-server mariadb-server
# What the local Kubernetes cluster runs (internal/cluster, whose test is in unit), and
# debootstrap for its images' Debian bases (internal/image).
CLUSTER_PACKAGES := containerd runc containernetworking-plugins etcd-server iptables socat conntrack debootstrap
PROFILE ?= quick
# One build configuration for everything built here, the tests included:
# static and independent of the checkout's path, as the images' binaries
# must be (image.GoStatic). Then the tests, vet, make build and the image
# builds share every compiled package in Go's build cache; with two
# configurations a cold `make test` compiled msbench's dependencies twice.
export CGO_ENABLED := 0
export GOFLAGS := $(strip $(shell $(GO) env GOFLAGS) -trimpath)

.PHONY: run test build generate deps fmt-check vet unit bench clean

# Every folder studies/NAME holding a study.yaml is a study; each one's
# report path is printed as it finishes.
STUDIES ?= $(patsubst studies/%/study.yaml,%,$(wildcard studies/*/study.yaml))

run: deps build
	@for s in $(STUDIES); do $(BIN) run $$s --profile $(PROFILE) || exit 1; done
	@$(BIN) report --index results

test: deps generate fmt-check vet unit

generate:
	$(GO) generate ./cmd/msbench

# go generate links every study's analysis into msbench.
build:
	$(GO) generate ./cmd/msbench
	$(GO) build -o $(BIN) ./cmd/msbench

deps:
	@scripts/install-deps $(DEBIAN_PACKAGES) $(CLUSTER_PACKAGES)

fmt-check:
	@unformatted=$$(gofmt -l cmd internal studies tools bench); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-ed:"; echo "$$unformatted"; exit 1; fi

vet:
	$(GO) vet ./...
	@for m in $(SERVICE_MODULES); do echo "go vet $$m"; (cd $$m && $(GO) vet ./...) || exit 1; done

# The cluster test's first build of Kubernetes takes minutes. internal/cluster's
# own tests bring up and take down clusters of their own; the other packages whose
# tests run pods share one (scripts/with-test-cluster).
# vet ran every analyzer already, so the tests skip go test's own vet pass.
unit:
	$(GO) test -count=1 -vet=off -timeout 30m ./internal/cluster/
	scripts/with-test-cluster $(GO) test -count=1 -vet=off -timeout 30m $$($(GO) list ./... | grep -v '/internal/cluster$$')
	@for m in $(SERVICE_MODULES); do echo "go test $$m"; (cd $$m && $(GO) test -count=1 -vet=off ./...) || exit 1; done

# Load-engine benchmarks: allocations per request, and msbench against wrk
# on a pinned nginx (see "Benchmarks of the load engine" in README.md).
bench: deps build
	$(GO) test -run '^$$' -bench . -benchmem ./internal/load/
	$(GO) run ./bench/vswrk -msbench $(BIN)

clean:
	rm -rf bin
