package io.msbench.frameworks.gateway;

import java.util.List;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * GET /ready: 200 once Eureka, as the gateway last fetched it, has an
 * instance of every service the routes name; 503 naming the missing ones
 * before that. The routes resolve lb://NAME from the same fetched registry.
 */
@RestController
public class ReadyController {
	private static final List<String> SERVICES = List.of("hello", "universities");

	private final ReactiveDiscoveryClient discovery;

	public ReadyController(ReactiveDiscoveryClient discovery) {
		this.discovery = discovery;
	}

	@GetMapping("/ready")
	public Mono<ResponseEntity<String>> ready() {
		return Flux.fromIterable(SERVICES)
				.filterWhen(service -> discovery.getInstances(service).hasElements().map(found -> !found))
				.collectList()
				.map(missing -> missing.isEmpty()
						? ResponseEntity.ok("ready\n")
						: ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("not in Eureka yet: " + missing + "\n"));
	}
}
