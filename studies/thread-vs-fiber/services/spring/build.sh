#!/usr/bin/env bash
# Builds target/thread-vs-fiber.jar with the JDK 25 beside the system JDK,
# and unpacks it into target/app (app/thread-vs-fiber.jar and app/lib), the
# form run.sh starts: Spring Boot's documentation recommends it in
# production ("Efficient Deployments"), since loading classes from nested
# jars costs at startup and nothing after it.
# The build runs offline (-o) when the local Maven repository already holds
# every dependency and plugin, so repeated builds neither need nor wait for the
# network; only a build that fails for lack of an artifact goes online.
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
export JAVA_HOME
# Maven 3.8's bundled Guava warns about sun.misc.Unsafe on JDK 24+; the flag
# keeps that noise out of the build output.
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! mvn -B -q -o package -DskipTests >"$log" 2>&1; then
	# Anything but a missing artifact (a compile error, a failing plugin)
	# would fail online too: report it instead of building twice.
	if ! grep -qiE 'offline|has not been downloaded|Could not resolve|not been resolved' "$log"; then
		cat "$log" >&2
		exit 1
	fi
	echo "thread-vs-fiber: dependencies not in the local Maven repository; building online" >&2
	mvn -B -q package -DskipTests
fi
rm -rf target/app
"$JAVA_HOME/bin/java" -Djarmode=tools -jar target/thread-vs-fiber.jar extract --destination target/app >/dev/null
