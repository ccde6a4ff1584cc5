# Sourced by build.sh and run.sh: sets JAVA_HOME to the JDK 25 in /usr/lib/jvm,
# the one studies/thread-vs-fiber runs Spring on too.
JAVA_HOME=""
for d in /usr/lib/jvm/*25*; do
	if [ -x "$d/bin/java" ] && [ -x "$d/bin/javac" ]; then
		JAVA_HOME="$d"
		break
	fi
done
if [ -z "$JAVA_HOME" ]; then
	echo "frameworks: no JDK 25 under /usr/lib/jvm (looked for /usr/lib/jvm/*25*);" \
		"install a JDK 25 there, e.g. Eclipse Temurin 25 (package temurin-25-jdk from Adoptium's apt repository)" >&2
	exit 1
fi
