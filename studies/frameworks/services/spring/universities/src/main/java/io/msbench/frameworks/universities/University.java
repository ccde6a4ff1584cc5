package io.msbench.frameworks.universities;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** One record of the dataset, with its field names. */
public record University(
		@JsonProperty("web_pages") List<String> webPages,
		String name,
		@JsonProperty("alpha_two_code") String alphaTwoCode,
		@JsonProperty("state-province") String stateProvince,
		List<String> domains,
		String country) {
}
