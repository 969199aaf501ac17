# ringloop: two commands do all the set-up on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
GO    ?= go
PKGS  := ./...
# tests/builds drives the go tool itself (test-builds runs it once).
# The packages whose tests take longest come first: go test starts packages
# in the order given, -p (the number of cores) at a time, and a suite ends
# when its longest package does. In ./... order websocket (its tests one
# after another, over a third of the race-enabled suite's time) started
# last, while the other core had nothing left to run.
SLOWFIRST = $(shell $(GO) list ./websocket ./httpserver ./tests ./looptls ./netconn ./engine ./packet)
TESTPKGS = $(SLOWFIRST) $(filter-out $(SLOWFIRST) %/tests/builds,$(shell $(GO) list ./...))

.PHONY: all deps build test test-stages testsum check test-modules test-modules-steps test-nocgo test-nocgo-steps test-builds test-builds-steps test-bench test-bench-steps fuzz-steps test-kernels fuzz vet staticcheck demo bench bench-quick bench-compare bench-readme latency fmt api

all: build

# deps installs the system packages the build and the benchmarks need
# (liburing-dev for the io_uring driver, gcc for cgo and the C reference
# server, wrk and curl for HTTP load and the httpserver client tests, curl and
# openssl for looptls's interop tests, strace and perf to count system calls,
# gnuplot for the bench chart, pkg-config, node, npm and Python's websockets
# for websocket's interop tests, which install the npm package ws themselves
# into the user's cache directory, nghttp2-client's nghttp and h2load as
# HTTP/2 clients of examples/httpserver's tests), and
# what test-kernels needs to fetch and boot Debian kernels (qemu, the Debian
# archive keyring). npm is asked for only when no npm command is there:
# NodeSource's nodejs package carries its own and conflicts with Debian's.
DEPS := liburing-dev gcc pkg-config wrk curl openssl strace linux-perf gnuplot-nox fonts-dejavu-core qemu-system-x86 debian-archive-keyring nodejs python3-websockets bind9-dnsutils dnsperf nghttp2-client
deps:
	@missing=""; \
	for p in $(DEPS); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	command -v npm >/dev/null 2>&1 || dpkg -s npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "deps: installing$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends$$missing >/dev/null; \
		else \
			echo "deps: missing$$missing; run: sudo apt-get update && sudo apt-get install -y$$missing" >&2; \
			exit 1; \
		fi; \
	fi

build: deps
	$(GO) build $(PKGS)

vet:
	$(GO) vet $(PKGS)

# staticcheck: the pinned release (fetched through the module proxy on first
# use), on the module, on the packages whose files differ without cgo (the
# epoll-only build has files of its own; the others' files were checked
# already), and on the bench module.
STATICCHECK_VERSION := v0.7.0
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
PKGFILES := {{.ImportPath}} {{.GoFiles}} {{.TestGoFiles}} {{.XTestGoFiles}}
staticcheck:
	$(STATICCHECK) $(PKGS)
	@nocgo=$$(comm -13 <($(GO) list -f '$(PKGFILES)' $(PKGS) | sort) <(CGO_ENABLED=0 $(GO) list -f '$(PKGFILES)' $(PKGS) | sort) | cut -d' ' -f1); \
	echo "CGO_ENABLED=0 staticcheck" $$nocgo; \
	[ -z "$$nocgo" ] || CGO_ENABLED=0 $(STATICCHECK) $$nocgo
	cd bench && $(STATICCHECK) ./...
	cd metrics && $(STATICCHECK) ./...
	cd examples/metrics && $(STATICCHECK) ./...
	cd examples/dns && $(STATICCHECK) ./...
	cd examples/grpc && $(STATICCHECK) ./...
	cd examples/http3 && $(STATICCHECK) ./...

# api prints the module's exported surface per package and in total (funcs,
# types, consts, vars, methods of exported types; With* options apart),
# leaving out internal/, tests, examples, bench and nested modules: the
# figure issue 41 bounds, reproducible from any checkout.
api:
	$(GO) run ./internal/apicount

fmt:
	gofmt -l -w .

# Every stage of make test runs under testsum (tests/testsum): it prints the
# stage's time and, for go test stages, its leaf tests (a test with subtests
# counts its subtests) from go test -json as "stage race: N passed, N failed,
# N skipped in 12m03s", shows what a plain go test shows (package lines,
# failing tests' output) plus every skip with its reason, and fails the stage
# on a skip that tests/skips.txt (stages, package, test and a reason) does
# not name. make test ends with every stage's line and the total.
TESTSUM := $(CURDIR)/bin/testsum
STAGES  := $(CURDIR)/bin/stages.jsonl
# A race-enabled binary sleeps a second before it exits (GORACE's
# atexit_sleep_ms, default 1000), so that reports other threads are still
# printing get out. Races are reported as they are found and fail the test
# or the exit code either way, and the suites start hundreds of race-enabled
# children (each command's main under every combo, the gRPC interop cases,
# the seccomp fault children): the sleep cost minutes a run. A GORACE given
# in the environment is kept.
export GORACE ?= atexit_sleep_ms=0
SKIPS   := $(CURDIR)/tests/skips.txt
STAGE    = $(TESTSUM) -allow $(SKIPS) -record $(STAGES) -stage

testsum:
	@mkdir -p bin && $(GO) build -o $(TESTSUM) ./tests/testsum

# test: static checks (vet, staticcheck, gofmt); one line on whether io_uring can run here (where it
# cannot, io_uring tests skip saying why and the epoll half runs; with
# RINGLOOP_REQUIRE_URING=1, as CI sets, that is a failure); the race-enabled
# suite (every integration test runs each backend under each kernel profile
# the backend tells apart, inside the suite; fault tests run children under a
# seccomp filter); the integration suites again without the race detector at
# full size (2000 connections, 16 MiB messages, 10^4-conn churn, 8x10^6
# tasks, 1 GiB uploads) on io_uring; the CGO_ENABLED=0 build and whole suite
# on the epoll driver, at full size (the same epoll driver the cgo build has,
# so its full-size run is not repeated there: RINGLOOP_TEST_BACKENDS); the
# other build configurations (test-builds); short fuzz runs; then the suites
# on real Debian kernels under qemu (test-kernels, ~17 min).
test: deps testsum
	@rm -f $(STAGES)
	@$(MAKE) --no-print-directory test-stages; rc=$$?; echo; $(TESTSUM) -report $(STAGES); exit $$rc

test-stages: check
	@set -o pipefail; $(GO) test -count=1 -v -run '^TestHost$$' ./internal/uringcheck | grep '^io_uring:'
	$(STAGE) race -- $(GO) test -race -json -timeout 30m $(TESTPKGS)
	RINGLOOP_TEST_BACKENDS=io_uring $(STAGE) full -- $(GO) test -count=1 -json -timeout 20m ./tests/ ./engine/ ./packet/
	RINGLOOP_TEST_BACKENDS=io_uring $(STAGE) upload -- $(GO) test -count=1 -json -timeout 10m -run '^TestStreamedUpload$$' ./httpserver/
	$(MAKE) --no-print-directory test-nocgo
	$(MAKE) --no-print-directory test-builds
	$(MAKE) --no-print-directory test-bench
	$(MAKE) --no-print-directory test-modules
	$(MAKE) --no-print-directory fuzz
	$(MAKE) --no-print-directory test-kernels

# check: the static checks make test starts with, each a timed stage.
check: testsum
	$(STAGE) vet -- $(GO) vet $(PKGS)
	$(STAGE) staticcheck -- $(MAKE) --no-print-directory staticcheck
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi

# test-bench: the bench module's unit tests and its smoke test (every server
# and client for one tiny round, about a minute).
test-bench: testsum
	$(STAGE) bench -- $(MAKE) --no-print-directory test-bench-steps
test-bench-steps:
	cd bench && $(GO) vet ./... && $(GO) test -count=1 -json -timeout 15m ./...

# test-modules: the nested modules that pin client_golang, miekg/dns,
# grpc-go or quic-go, which the core module stays free of (metrics,
# examples/metrics, examples/dns, examples/grpc, examples/http3): vet and the
# race-enabled tests (the metrics example's scrapes /metrics and parses it as
# Prometheus does; the DNS server's are queried by miekg/dns's client and by
# dig; the gRPC server's by grpc-go's client and its interop client cases,
# over h2c and TLS; the HTTP/3 server's, on ringloop's PacketConn, by
# quic-go's http3 client).
test-modules: testsum
	$(STAGE) modules -- $(MAKE) --no-print-directory test-modules-steps
test-modules-steps:
	cd metrics && $(GO) vet ./... && $(GO) test -race -count=1 -json -timeout 10m ./...
	cd examples/metrics && $(GO) vet ./... && $(GO) test -race -count=1 -json -timeout 10m ./...
	cd examples/dns && $(GO) vet ./... && $(GO) test -race -count=1 -json -timeout 10m ./...
	cd examples/grpc && $(GO) vet ./... && $(GO) test -race -count=1 -json -timeout 10m ./...
	cd examples/http3 && $(GO) vet ./... && $(GO) test -race -count=1 -json -timeout 10m ./...

test-nocgo: testsum
	$(STAGE) nocgo -- $(MAKE) --no-print-directory test-nocgo-steps
test-nocgo-steps:
	CGO_ENABLED=0 $(GO) build $(PKGS)
	CGO_ENABLED=0 $(GO) test -json -timeout 20m $(TESTPKGS)

# test-builds: what other build configurations get. The ringloop_nouring tag
# (cgo on, no liburing: epoll) and linux/arm64 vet and build clean; then the
# tests of tests/builds with the go tool: a
# service built without liburing's header fails on errors that each name the
# fix, and with the tag builds and serves on epoll, logging "built without
# liburing"; for darwin and windows the build stops on one line naming Linux,
# for 32-bit GOARCHes on one line saying 64-bit is needed, while tasks and
# timers vet clean.
test-builds: testsum
	$(STAGE) builds -- $(MAKE) --no-print-directory test-builds-steps
test-builds-steps:
	$(GO) vet -tags ringloop_nouring $(PKGS)
	CGO_ENABLED=0 GOARCH=arm64 $(GO) vet $(PKGS)
	CGO_ENABLED=0 GOARCH=arm64 $(GO) build $(PKGS)
	$(GO) test -count=1 -json -timeout 20m ./tests/builds/

# test-kernels: fetches the pinned Debian kernels (5.10, 6.1, 6.12; exact
# versions and SHA-256 in tests/kernels/pins) through a private apt
# configuration into KERNEL_CACHE, boots each under qemu (TCG) with every
# package's tests built statically in its initramfs, runs them with -short on
# the kernel's own features, and prints what the probe chose and a table;
# then boots 6.12 again with io_uring disabled (sysctl), where the probe must
# choose epoll and the integration suites and protocol layers run on it (in
# the io_uring boots the layers run on io_uring only; see layerPkgs). A full run writes
# tests/kernels/results/latest.json and renders README's kernel table from it:
# commit both.
KERNEL_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ringloop/kernels
test-kernels: deps testsum
	tests/kernels/fetch.sh tests/kernels/pins $(KERNEL_CACHE)
	$(GO) run ./tests/kernels/run -pins tests/kernels/pins -cache $(KERNEL_CACHE) -out bin/kernels -allow $(SKIPS) -record $(STAGES)

# fuzz: short runs of the model-based fuzz targets (timer heap, task queues),
# of the HTTP parser against net/http's reading, and of the WebSocket frame
# parser and a connection's whole read path on a loop (FuzzReader: about
# 4000 executions a second, a socket pair each), and examples/dns's answers
# to any bytes (FuzzAnswer). Budgets are counts of
# executions (about 10 s each on a 2-core machine), not durations: Go 1.26's
# fuzz coordinator can report a spurious "context deadline exceeded" failure
# when a -fuzztime duration expires under load (golang/go#75804).
FUZZ_SCALE ?= 1
fuzz: testsum
	$(STAGE) fuzz -- $(MAKE) --no-print-directory fuzz-steps
fuzz-steps:
	$(GO) test -json -run '^$$' -fuzz '^FuzzModel$$' -fuzztime $$((300000 * $(FUZZ_SCALE)))x ./internal/timers
	$(GO) test -json -run '^$$' -fuzz '^FuzzQueue$$' -fuzztime $$((400000 * $(FUZZ_SCALE)))x ./internal/taskq
	$(GO) test -json -run '^$$' -fuzz '^FuzzParser$$' -fuzztime $$((200000 * $(FUZZ_SCALE)))x ./httpserver
	$(GO) test -json -run '^$$' -fuzz '^FuzzH2$$' -fuzztime $$((100000 * $(FUZZ_SCALE)))x ./httpserver
	$(GO) test -json -run '^$$' -fuzz '^FuzzFrames$$' -fuzztime $$((200000 * $(FUZZ_SCALE)))x ./websocket
	$(GO) test -json -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $$((50000 * $(FUZZ_SCALE)))x ./websocket
	cd examples/dns && $(GO) test -json -run '^$$' -fuzz '^FuzzAnswer$$' -fuzztime $$((100000 * $(FUZZ_SCALE)))x ./dnsserver

# demo: ringloop's echo server (each backend and threading mode) against a
# net echo server, each pinned in its own process, same client: one table
# and a verdict, after a SHA-256-checked run that shows nothing is lost;
# then HTTP against net/http, and UDP echo against net.UDPConn (every echo
# checked byte for byte, lost datagrams counted).
demo: deps
	cd bench && $(GO) run ./cmd/demo

# latency: one-connection ping-pong, server and client pinned to separate
# cores in separate processes (net vs ringloop, GOMAXPROCS 1 and 2, busy poll).
latency: deps
	./examples/pingpong/latency.sh

# bench-quick: the headline rows of the comparison with net, gnet, fasthttp,
# net/http and the C liburing server, one round (~2 min); bench-compare: the
# full sweep, 5 alternating rounds (estimated ~61 min). Both write
# bench/results/latest.{md,json,png} and a copy in bench/results/history/, and
# print the tables; bench-readme regenerates every passage that quotes a
# result (README's table, TLS, WebSocket and default-score paragraphs and
# kernel table, engine's doc) from bench/results/latest.json,
# bench/results/history/ and tests/kernels/results/latest.json.
bench-quick: deps
	cd bench && $(GO) run ./cmd/bench -mode quick -command "make bench-quick"

bench-compare: deps
	cd bench && $(GO) run ./cmd/bench -mode full -command "make bench-compare"

bench-readme:
	cd bench && $(GO) run ./cmd/readme -json results/latest.json -readme ../README.md

# bench: every micro-benchmark (tasks, timers, drivers, loop, echo, groups).
BENCHTIME ?= 500ms
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -timeout 60m $(PKGS)
