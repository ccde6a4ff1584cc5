#!/usr/bin/env bash
# Starts one program of the Spring deployment on the JDK 25: eureka, hello,
# universities or gateway, each on its address from the environment
# (EUREKA_ADDR, HELLO_ADDR, UNIVERSITIES_ADDR, ADDR; README.md lists the
# rest). JAVA_OPTS adds JVM options, split on whitespace.
set -euo pipefail
dir=$(dirname "$0")
. "$dir/jdk.sh"
case "${1:-}" in
eureka) addr=${EUREKA_ADDR:?EUREKA_ADDR (host:port) is not set} ;;
hello) addr=${HELLO_ADDR:?HELLO_ADDR (host:port) is not set} ;;
universities) addr=${UNIVERSITIES_ADDR:?UNIVERSITIES_ADDR (host:port) is not set} ;;
gateway) addr=${ADDR:?ADDR (host:port) is not set} ;;
*)
	echo "usage: run.sh eureka|hello|universities|gateway" >&2
	exit 2
	;;
esac
# The JVM ignores TMPDIR; Tomcat's work directory would otherwise stay in
# /tmp after the service stops.
# shellcheck disable=SC2086 # JAVA_OPTS is a list of options by design.
exec "$JAVA_HOME/bin/java" -Djava.io.tmpdir="${TMPDIR:-/tmp}" ${JAVA_OPTS:-} -jar "$dir/$1/$1.jar" \
	--server.address="${addr%:*}" --server.port="${addr##*:}"
