package io.msbench.frameworks.universities;

import java.io.IOException;
import java.util.List;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

@RestController
public class UniversitiesController {
	private final Universities universities;

	public UniversitiesController(Universities universities) {
		this.universities = universities;
	}

	@GetMapping("/universities")
	public List<University> find(@RequestParam(defaultValue = "") String country) throws IOException {
		return universities.find(country);
	}
}
