package com.github.msbench.threadvsfiber;

import org.springframework.core.MethodParameter;
import org.springframework.http.MediaType;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.ServerHttpRequest;
import org.springframework.http.server.ServerHttpResponse;
import org.springframework.http.server.ServletServerHttpRequest;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyAdvice;

/**
 * Writes {@code Server-Timing} just before a body is written, the last moment
 * a header can still be set. It applies to controller and error-handler
 * responses alike, so failed requests are timed too.
 */
@ControllerAdvice
class ServerTimingAdvice implements ResponseBodyAdvice<Object> {

	@Override
	public boolean supports(MethodParameter returnType, Class<? extends HttpMessageConverter<?>> converterType) {
		return true;
	}

	@Override
	public Object beforeBodyWrite(Object body, MethodParameter returnType, MediaType contentType,
			Class<? extends HttpMessageConverter<?>> converterType, ServerHttpRequest request,
			ServerHttpResponse response) {
		if (request instanceof ServletServerHttpRequest servlet
				&& servlet.getServletRequest().getAttribute(ServerTiming.ATTRIBUTE) instanceof ServerTiming timing) {
			response.getHeaders().set("Server-Timing", timing.header());
		}
		return body;
	}
}
