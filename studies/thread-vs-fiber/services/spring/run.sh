#!/usr/bin/env bash
# Runs the service on the JDK 25. Configuration comes from the environment
# (see README.md); JAVA_OPTS adds JVM options, split on whitespace.
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
jar=target/app/thread-vs-fiber.jar
if [ ! -f "$jar" ]; then
	echo "thread-vs-fiber: $jar missing; run build.sh first" >&2
	exit 1
fi
# The JVM ignores TMPDIR; Tomcat's work directory would otherwise stay in
# /tmp after the service stops.
# shellcheck disable=SC2086 # JAVA_OPTS is a list of options by design.
exec "$JAVA_HOME/bin/java" -Djava.io.tmpdir="${TMPDIR:-/tmp}" ${JAVA_OPTS:-} -jar "$jar" "$@"
