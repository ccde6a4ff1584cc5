package com.github.msbench.threadvsfiber;

import jakarta.servlet.MultipartConfigElement;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.servlet.MultipartConfigFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

/**
 * Derives the servlet multipart limits from the one image limit, so the
 * framework rejects an oversized upload while parsing it instead of after
 * buffering it. Declaring this bean replaces Spring Boot's
 * {@code spring.servlet.multipart.*} defaults (1 MB per file).
 */
@Configuration(proxyBeanMethods = false)
class UploadConfig {

	/**
	 * Room for the multipart framing and part headers around the image, so an
	 * image of exactly the limit is accepted. The Gin service uses the same.
	 */
	static final long FRAMING_BYTES = 64 * 1024;

	@Bean
	MultipartConfigElement multipartConfigElement(@Value("${images.max-bytes}") long maxImageBytes) {
		MultipartConfigFactory factory = new MultipartConfigFactory();
		factory.setMaxFileSize(DataSize.ofBytes(maxImageBytes));
		factory.setMaxRequestSize(DataSize.ofBytes(maxImageBytes + FRAMING_BYTES));
		// Keep every accepted upload in memory, as the Gin service does:
		// Tomcat's default threshold of 0 would write each one to a temp file.
		factory.setFileSizeThreshold(DataSize.ofBytes(maxImageBytes + FRAMING_BYTES));
		return factory.createMultipartConfig();
	}
}
