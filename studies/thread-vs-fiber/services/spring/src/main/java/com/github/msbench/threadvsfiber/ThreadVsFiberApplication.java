package com.github.msbench.threadvsfiber;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The thread-vs-fiber image service. One code base, two variants: Tomcat's
 * platform thread per request by default, or a virtual thread per request
 * when {@code spring.threads.virtual.enabled=true}.
 */
@SpringBootApplication
public class ThreadVsFiberApplication {

	public static void main(String[] args) {
		SpringApplication.run(ThreadVsFiberApplication.class, args);
	}
}
