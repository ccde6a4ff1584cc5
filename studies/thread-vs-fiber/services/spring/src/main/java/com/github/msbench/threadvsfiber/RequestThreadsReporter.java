package com.github.msbench.threadvsfiber;

import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.embedded.tomcat.TomcatWebServer;
import org.springframework.boot.web.servlet.context.ServletWebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.stereotype.Component;

/**
 * Logs which executor Tomcat really runs requests on, so a benchmark log
 * shows which variant was measured (platform or virtual threads) instead of
 * what the configuration meant to select.
 */
@Component
class RequestThreadsReporter implements ApplicationListener<ServletWebServerInitializedEvent> {

	private static final Logger log = LoggerFactory.getLogger(RequestThreadsReporter.class);

	@Override
	public void onApplicationEvent(ServletWebServerInitializedEvent event) {
		if (event.getWebServer() instanceof TomcatWebServer tomcat) {
			Executor executor = tomcat.getTomcat().getConnector().getProtocolHandler().getExecutor();
			log.info("Tomcat runs requests on {}", executor);
		}
	}
}
