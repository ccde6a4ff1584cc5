package com.github.msbench.threadvsfiber;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Starts the {@code handler} clock before the DispatcherServlet, so it covers
 * the multipart parsing Spring does before the controller runs, as the Gin
 * handler's does.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
class ServerTimingFilter extends OncePerRequestFilter {

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		request.setAttribute(ServerTiming.ATTRIBUTE, new ServerTiming());
		chain.doFilter(request, response);
	}
}
