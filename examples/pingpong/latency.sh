#!/usr/bin/env bash
# One-connection ping-pong latency, server and client in separate processes
# pinned to separate cores: net (goroutine per connection) against ringloop on
# each backend, at GOMAXPROCS=1 and 2, and with a 50µs busy-poll window.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$bin"' EXIT
go build -o "$bin/echoserver" ./examples/echoserver
go build -o "$bin/pingpong" ./examples/pingpong

measure() { # name, then the server command
	local name=$1; shift
	local out="$bin/server.out"
	: > "$out"
	taskset -c 0 "$@" > "$out" 2>/dev/null < /dev/null &
	local pid=$!
	for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.05; done
	local addr
	addr=$(awk 'NR==1 {print $2}' "$out")
	taskset -c 1 "$bin/pingpong" -addr "$addr" -name "$name"
	kill "$pid"; wait "$pid" 2>/dev/null || true
}

echo "$(date -u +%F), $(nproc) cores, $(uname -r); 128 B messages, 20000 round trips"
for procs in 1 2; do
	measure "net GOMAXPROCS=$procs" env GOMAXPROCS=$procs "$bin/pingpong" -serve
	for b in io_uring epoll; do
		measure "ringloop $b GOMAXPROCS=$procs" env GOMAXPROCS=$procs RINGLOOP_BACKEND=$b "$bin/echoserver"
	done
done
for b in io_uring epoll; do
	measure "ringloop $b busy-poll 50µs" env GOMAXPROCS=1 RINGLOOP_BACKEND=$b "$bin/echoserver" -busy-poll 50us
done
