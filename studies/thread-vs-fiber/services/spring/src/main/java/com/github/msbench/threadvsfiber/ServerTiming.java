package com.github.msbench.threadvsfiber;

import java.util.Locale;

/**
 * The stages of one request, reported in the W3C {@code Server-Timing} header
 * so msbench can split T_p per request without scraping logs. One instance
 * per request (it is not thread-safe); {@link ServerTimingFilter} creates it
 * and {@link ServerTimingAdvice} writes the header.
 */
final class ServerTiming {

	/** Request attribute under which the filter stores the request's instance. */
	static final String ATTRIBUTE = "msbench.serverTiming";

	private final long start = System.nanoTime();
	private final StringBuilder header = new StringBuilder();

	/** Times one stage; close it (try-with-resources) when the stage ends. */
	Stage stage(String name) {
		return new Stage(name, System.nanoTime());
	}

	/** The header value: every finished stage, then {@code handler} up to now. */
	String header() {
		StringBuilder value = new StringBuilder(header);
		append(value, "handler", System.nanoTime() - start);
		return value.toString();
	}

	private static void append(StringBuilder value, String name, long nanos) {
		if (!value.isEmpty()) {
			value.append(", ");
		}
		// Locale.ROOT: a decimal point whatever the JVM's locale, as the header requires.
		value.append(name).append(";dur=").append(String.format(Locale.ROOT, "%.3f", nanos / 1e6));
	}

	/** A running stage; closing it records its duration. */
	final class Stage implements AutoCloseable {

		private final String name;
		private final long begin;

		private Stage(String name, long begin) {
			this.name = name;
			this.begin = begin;
		}

		@Override
		public void close() {
			append(header, name, System.nanoTime() - begin);
		}
	}
}
