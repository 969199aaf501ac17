# ringloop: two commands do all the set-up on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
GO    ?= go
PKGS  := ./...

.PHONY: all deps build test test-nocgo fuzz vet demo bench latency fmt

all: build

# deps installs the system packages the build and the benchmarks need
# (liburing-dev for the io_uring driver, wrk for HTTP load, pkg-config).
deps:
	@missing=""; \
	for p in liburing-dev wrk pkg-config; do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "deps: installing$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$$missing >/dev/null; \
		else \
			echo "deps: missing$$missing; run: sudo apt-get update && sudo apt-get install -y$$missing" >&2; \
			exit 1; \
		fi; \
	fi

build: deps
	$(GO) build $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -l -w .

# test: static checks, the race-enabled suite (every integration test runs
# each backend under each kernel profile inside the suite; fault tests run
# children under a seccomp filter), the integration suites again without the
# race detector at full size (2000 connections, 16 MiB messages, 10^4-conn
# churn, 8x10^6 tasks), the CGO_ENABLED=0 build and suite on the epoll
# driver, and short fuzz runs.
test: deps vet
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	$(GO) test -race -timeout 30m $(PKGS)
	$(GO) test -count=1 -timeout 20m ./tests/ ./engine/
	$(MAKE) test-nocgo
	$(MAKE) fuzz

test-nocgo:
	CGO_ENABLED=0 $(GO) build $(PKGS)
	CGO_ENABLED=0 $(GO) test -timeout 20m $(PKGS)

# fuzz: short runs of the model-based fuzz targets (timer heap, task queues).
FUZZTIME ?= 10s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzModel$$' -fuzztime $(FUZZTIME) ./timers
	$(GO) test -run '^$$' -fuzz '^FuzzQueue$$' -fuzztime $(FUZZTIME) ./tasks

demo: deps
	$(GO) run ./examples/demo

# latency: one-connection ping-pong, server and client pinned to separate
# cores in separate processes (net vs ringloop, GOMAXPROCS 1 and 2, busy poll).
latency: deps
	./examples/pingpong/latency.sh

# bench: every micro-benchmark (tasks, timers, drivers, loop, echo, groups).
BENCHTIME ?= 500ms
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -timeout 60m $(PKGS)
