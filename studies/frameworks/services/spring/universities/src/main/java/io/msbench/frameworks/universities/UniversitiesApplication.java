package io.msbench.frameworks.universities;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** The universities service: registers with Eureka and answers GET /universities. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class UniversitiesApplication {
	public static void main(String[] args) {
		SpringApplication.run(UniversitiesApplication.class, args);
	}
}
