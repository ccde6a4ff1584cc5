package io.msbench.frameworks.universities;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.util.List;
import org.springframework.stereotype.Service;

/** The dataset, read at start or on every request as configured. */
@Service
public class Universities {
	private static final TypeReference<List<University>> LIST = new TypeReference<>() {
	};

	private final ObjectMapper mapper;
	private final File file;
	/** The dataset read at start; null when it is read per request. */
	private final List<University> loaded;

	// The file is read in both modes, so that an unusable one stops the start.
	public Universities(ObjectMapper mapper, UniversitiesProperties properties) throws IOException {
		this.mapper = mapper;
		this.file = properties.file().toFile();
		List<University> all = read();
		this.loaded = properties.load() == UniversitiesProperties.Load.STARTUP ? all : null;
	}

	/** The universities of the country, exactly as spelled; none for an unknown one. */
	public List<University> find(String country) throws IOException {
		List<University> all = loaded != null ? loaded : read();
		return all.stream().filter(u -> u.country().equals(country)).toList();
	}

	private List<University> read() throws IOException {
		return mapper.readValue(file, LIST);
	}
}
