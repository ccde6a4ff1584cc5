#!/usr/bin/env bash
# Builds the Micro deployment into OUT: the gateway, hello and universities
# programs, the registry (the NATS server release go.mod pins as a tool),
# and run.sh, which starts any of them.
set -euo pipefail
out=$(realpath -m "${1:?usage: build.sh OUT}")
cd "$(dirname "$0")"
mkdir -p "$out"
go build -o "$out/" ./gateway ./hello ./universities
go build -o "$out/registry" github.com/nats-io/nats-server/v2
cp run.sh "$out/"
