package com.github.msbench.threadvsfiber;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Translates {@code DATABASE_URL} ({@code postgres://user[:password]@host[:port]/db[?params]},
 * the form every msbench service receives) into {@code spring.datasource.*}. The
 * result ranks just below the OS environment, so an explicit
 * {@code SPRING_DATASOURCE_URL} still wins.
 */
class DatabaseUrlEnvironmentPostProcessor implements EnvironmentPostProcessor {

	private static final String SOURCE_NAME = "databaseUrl";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		String url = environment.getProperty("DATABASE_URL");
		if (url == null || url.isBlank()) {
			return;
		}
		environment.getPropertySources().addAfter(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
				new MapPropertySource(SOURCE_NAME, datasourceProperties(url)));
	}

	static Map<String, Object> datasourceProperties(String databaseUrl) {
		URI uri;
		try {
			uri = new URI(databaseUrl);
		}
		catch (URISyntaxException e) {
			throw new IllegalArgumentException("DATABASE_URL is not a URL: " + e.getMessage(), e);
		}
		if (!"postgres".equals(uri.getScheme()) && !"postgresql".equals(uri.getScheme())) {
			throw new IllegalArgumentException(
					"DATABASE_URL must start with postgres:// or postgresql://, got scheme " + uri.getScheme());
		}
		if (uri.getHost() == null) {
			throw new IllegalArgumentException("DATABASE_URL has no host");
		}
		String jdbcUrl = "jdbc:postgresql://" + uri.getHost() + (uri.getPort() > 0 ? ":" + uri.getPort() : "")
				+ (uri.getRawPath() == null ? "/" : uri.getRawPath())
				+ (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
		Map<String, Object> props = new HashMap<>();
		props.put("spring.datasource.url", jdbcUrl);
		String userInfo = uri.getRawUserInfo();
		if (userInfo != null) {
			String[] parts = userInfo.split(":", 2);
			props.put("spring.datasource.username", decode(parts[0]));
			if (parts.length == 2) {
				props.put("spring.datasource.password", decode(parts[1]));
			}
		}
		return props;
	}

	/** Percent-decodes user info; unlike a form value, '+' there is a literal plus. */
	private static String decode(String s) {
		return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
	}
}
