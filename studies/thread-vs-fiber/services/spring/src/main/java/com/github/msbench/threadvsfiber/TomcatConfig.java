package com.github.msbench.threadvsfiber;

import java.time.Duration;
import org.apache.catalina.core.StandardContext;
import org.apache.coyote.http11.AbstractHttp11Protocol;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.embedded.tomcat.TomcatConnectorCustomizer;
import org.springframework.boot.web.embedded.tomcat.TomcatContextCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** What Spring Boot's {@code server.tomcat.*} properties do not reach. */
@Configuration(proxyBeanMethods = false)
class TomcatConfig {

	/**
	 * How many times a stalled body makes Tomcat wait out its read timeout:
	 * the read that times out, the multipart parser's read when it closes the
	 * part, and the swallowing of the rest after the answer. Tomcat's timeout
	 * is per read, so each read gets a third and the stalled request still
	 * ends, connection closed, within the body timeout (measured: answer 408
	 * after two thirds, close after three).
	 */
	private static final int STALLED_BODY_READS = 3;

	/**
	 * Gives the request body its own timeout; otherwise
	 * {@code server.tomcat.connection-timeout}, meant for the headers, would
	 * cover every read of the body too.
	 */
	@Bean
	TomcatConnectorCustomizer bodyTimeout(@Value("${images.body-timeout}") Duration timeout) {
		return connector -> {
			if (connector.getProtocolHandler() instanceof AbstractHttp11Protocol<?> http) {
				http.setDisableUploadTimeout(false);
				http.setConnectionUploadTimeout(Math.toIntExact(timeout.toMillis() / STALLED_BODY_READS));
			}
		};
	}

	/**
	 * After the graceful shutdown phase (1 s), Tomcat would wait up to 2 s
	 * more per servlet for requests still inside it, and a request on a
	 * virtual thread blocked in a read is still inside. The lab harness kills
	 * 2 s after SIGTERM, so only a moment.
	 */
	@Bean
	TomcatContextCustomizer shortUnload() {
		return context -> {
			if (context instanceof StandardContext standard) {
				standard.setUnloadDelay(100);
			}
		};
	}
}
