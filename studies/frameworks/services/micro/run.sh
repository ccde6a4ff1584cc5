#!/usr/bin/env bash
# Starts one program of the Micro deployment; README.md lists the
# environment each one reads.
set -euo pipefail
dir=$(dirname "$0")
case "${1:-}" in
registry)
	: "${REGISTRY_ADDR:?REGISTRY_ADDR (host:port) is not set}"
	exec "$dir/registry" --addr "${REGISTRY_ADDR%:*}" --port "${REGISTRY_ADDR##*:}"
	;;
hello | universities | gateway)
	exec "$dir/$1"
	;;
*)
	echo "usage: run.sh registry|hello|universities|gateway" >&2
	exit 2
	;;
esac
