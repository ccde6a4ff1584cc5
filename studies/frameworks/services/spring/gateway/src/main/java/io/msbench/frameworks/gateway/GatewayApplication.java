package io.msbench.frameworks.gateway;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** Spring Cloud Gateway in front of the hello and universities services. */
@SpringBootApplication
public class GatewayApplication {
	public static void main(String[] args) {
		// Reactor Netty's event loops wait 2 s for quiet before they stop;
		// with the 1 s grace for requests in flight that would exceed the
		// few seconds a program gets after SIGTERM.
		System.setProperty("reactor.netty.ioShutdownQuietPeriod", "0");
		SpringApplication.run(GatewayApplication.class, args);
	}
}
