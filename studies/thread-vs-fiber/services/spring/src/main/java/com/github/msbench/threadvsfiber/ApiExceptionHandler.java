package com.github.msbench.threadvsfiber;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.multipart.MaxUploadSizeExceededException;
import org.springframework.web.multipart.MultipartException;
import org.springframework.web.multipart.support.MissingServletRequestPartException;
import org.springframework.web.server.ResponseStatusException;

/** Turns every failure into a status and a JSON {@code {"error": "…"}} body. */
@RestControllerAdvice
class ApiExceptionHandler {

	static final String BAD_ID = "id must be a positive integer";

	/** The error body. */
	record ErrorBody(String error) {
	}

	private static final Logger log = LoggerFactory.getLogger(ApiExceptionHandler.class);

	private final long maxImageBytes;

	ApiExceptionHandler(@Value("${images.max-bytes}") long maxImageBytes) {
		this.maxImageBytes = maxImageBytes;
	}

	@ExceptionHandler
	ResponseEntity<ErrorBody> tooLarge(MaxUploadSizeExceededException e) {
		return error(HttpStatus.PAYLOAD_TOO_LARGE, "upload larger than the image limit of " + maxImageBytes + " bytes");
	}

	@ExceptionHandler
	ResponseEntity<ErrorBody> missingPart(MissingServletRequestPartException e) {
		return error(HttpStatus.BAD_REQUEST, "missing multipart field \"" + e.getRequestPartName() + "\"");
	}

	@ExceptionHandler
	ResponseEntity<ErrorBody> notMultipart(MultipartException e) {
		return error(HttpStatus.BAD_REQUEST, "want a multipart/form-data body: " + e.getMessage());
	}

	@ExceptionHandler
	ResponseEntity<ErrorBody> badId(MethodArgumentTypeMismatchException e) {
		return error(HttpStatus.BAD_REQUEST, BAD_ID);
	}

	@ExceptionHandler
	ResponseEntity<ErrorBody> rejected(ResponseStatusException e) {
		return error(e.getStatusCode(), e.getReason());
	}

	/** Spring MVC's own exceptions (405, unknown path, …) keep their status; anything else is a 500. */
	@ExceptionHandler
	ResponseEntity<ErrorBody> other(Exception e) {
		if (e instanceof ErrorResponse framework) {
			return error(framework.getStatusCode(), framework.getBody().getDetail());
		}
		log.error("request failed", e);
		return error(HttpStatus.INTERNAL_SERVER_ERROR, "internal error: " + e.getMessage());
	}

	private static ResponseEntity<ErrorBody> error(HttpStatusCode status, String reason) {
		return ResponseEntity.status(status).body(new ErrorBody(reason));
	}
}
