#!/usr/bin/env bash
# Builds the ipc study's services into OUT (build.sh OUT): installs the
# dependencies package-lock.json pins, with npm ci from npm's local cache
# when it has them, and copies what the programs need to run. node_modules
# here is reused while it matches the lock file, so a build after the first
# needs no network and takes a second.
set -euo pipefail
out=${1:?usage: build.sh OUT}
cd "$(dirname "$0")"

# One install at a time: a study run and a test may build at once.
exec 9<.
flock 9

stamp=node_modules/.msbench-lock
want=$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	# No package needs an install script (all are plain JavaScript), so none
	# is run. npm ci empties node_modules first, the stamp with it.
	npm ci --prefer-offline --no-audit --no-fund --ignore-scripts --loglevel=error >&2
	echo "$want" >"$stamp"
fi

mkdir -p "$out"
cp -R src proto package.json "$out"/
# Hard links when OUT is on the same file system: a later npm ci replaces
# these files rather than changing them, so the links keep the old ones.
cp -al node_modules "$out"/ 2>/dev/null || cp -R node_modules "$out"/
