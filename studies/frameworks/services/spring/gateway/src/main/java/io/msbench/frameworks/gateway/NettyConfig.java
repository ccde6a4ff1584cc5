package io.msbench.frameworks.gateway;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * What Spring Boot has no property for: Reactor Netty's deadline for a
 * request's body (READ_TIMEOUT). Without it a client that sends less body
 * than it declared holds its exchange, and the route's connection to the
 * service, for ever.
 */
@Configuration
public class NettyConfig {
	@Bean
	WebServerFactoryCustomizer<NettyReactiveWebServerFactory> requestTimeout(
			@Value("${gateway.read-timeout}") Duration readTimeout) {
		return factory -> factory.addServerCustomizers(server -> server.requestTimeout(readTimeout));
	}

	/**
	 * The deadline's exception is the client's fault: 408, and the connection
	 * closed, instead of the 500 Spring Boot's error handler (order -1) makes
	 * of an exception it does not know. Reactor Netty keeps the exception's
	 * class package-private, so it is known by name.
	 */
	@Bean
	@Order(-2)
	WebExceptionHandler requestTimeoutHandler() {
		return (exchange, ex) -> {
			var response = exchange.getResponse();
			if (!isRequestTimeout(ex) && !isRequestTimeout(ex.getCause()) || response.isCommitted()) {
				return Mono.error(ex);
			}
			response.setStatusCode(HttpStatus.REQUEST_TIMEOUT);
			response.getHeaders().setConnection("close");
			response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
			byte[] body = "{\"error\":\"request body not received in time\"}".getBytes(StandardCharsets.UTF_8);
			return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
		};
	}

	private static boolean isRequestTimeout(Throwable ex) {
		return ex != null && ex.getClass().getName().equals("reactor.netty.http.server.RequestTimeoutException");
	}
}
