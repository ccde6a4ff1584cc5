#!/usr/bin/env bash
# Compiles the Nest programs with the Nest CLI (tsc) and puts them into OUT
# with their production dependencies and run.sh. npm installs exactly what
# package-lock.json says, from npm's cache when it has it.
set -euo pipefail
out=$(realpath -m "${1:?usage: build.sh OUT}")
cd "$(dirname "$0")"
npm ci --prefer-offline --no-audit --no-fund --loglevel=error
npx --no-install nest build
mkdir -p "$out"
cp -r dist package.json package-lock.json run.sh "$out/"
cd "$out"
npm ci --omit=dev --prefer-offline --no-audit --no-fund --loglevel=error
