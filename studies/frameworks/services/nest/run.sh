#!/usr/bin/env bash
# Starts one program of the Nest deployment: hello, universities or gateway;
# README.md lists the environment each one reads.
set -euo pipefail
dir=$(dirname "$0")
case "${1:-}" in
hello | universities | gateway)
	# Express and Nest skip development-only work in production.
	NODE_ENV=${NODE_ENV:-production} exec node "$dir/dist/$1/main.js"
	;;
*)
	echo "usage: run.sh hello|universities|gateway" >&2
	exit 2
	;;
esac
