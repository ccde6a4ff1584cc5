package io.msbench.frameworks.universities;

import java.nio.file.Path;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Where the dataset is (UNIVERSITIES_FILE) and when it is read
 * (UNIVERSITIES_LOAD): once at start, or on every request, which is what the
 * thesis' Spring service did and so the default here.
 */
@ConfigurationProperties("universities")
public record UniversitiesProperties(Path file, Load load) {
	public enum Load {
		STARTUP, PER_REQUEST
	}
}
