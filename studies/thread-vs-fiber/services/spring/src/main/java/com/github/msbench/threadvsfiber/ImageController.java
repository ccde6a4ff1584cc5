package com.github.msbench.threadvsfiber;

import static org.springframework.http.HttpStatus.BAD_REQUEST;

import com.github.msbench.threadvsfiber.ImageRepository.StoredBytes;
import com.github.msbench.threadvsfiber.ImageService.CreatedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestPart;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.multipart.MultipartFile;
import org.springframework.web.server.ResponseStatusException;

@RestController
class ImageController {

	private final ImageService images;

	ImageController(ImageService images) {
		this.images = images;
	}

	/** Readiness only: touches no database, so it says the HTTP stack is up. */
	@GetMapping("/healthz")
	Map<String, String> healthz() {
		return Map.of("status", "ok");
	}

	@PostMapping("/images")
	ResponseEntity<CreatedImage> upload(@RequestPart("image") MultipartFile image,
			@RequestAttribute(ServerTiming.ATTRIBUTE) ServerTiming timing) {
		if (image.isEmpty()) {
			throw new ResponseStatusException(BAD_REQUEST, "multipart field \"image\" is empty");
		}
		byte[] upload;
		try {
			upload = image.getBytes();
		}
		catch (IOException e) {
			throw new UncheckedIOException("reading multipart field \"image\"", e);
		}
		CreatedImage created = images.store(upload, timing);
		return ResponseEntity.created(URI.create("/images/" + created.id())).body(created);
	}

	@GetMapping("/images/{id}")
	ResponseEntity<byte[]> original(@PathVariable long id,
			@RequestAttribute(ServerTiming.ATTRIBUTE) ServerTiming timing) {
		return bytes(images.original(checkId(id), timing));
	}

	@GetMapping("/images/{id}/thumbnail")
	ResponseEntity<byte[]> thumbnail(@PathVariable long id,
			@RequestAttribute(ServerTiming.ATTRIBUTE) ServerTiming timing) {
		return bytes(images.thumbnail(checkId(id), timing));
	}

	/** Ids are positive; a non-number is rejected by ApiExceptionHandler before this runs. */
	private static long checkId(long id) {
		if (id <= 0) {
			throw new ResponseStatusException(BAD_REQUEST, ApiExceptionHandler.BAD_ID);
		}
		return id;
	}

	private static ResponseEntity<byte[]> bytes(StoredBytes stored) {
		return ResponseEntity.ok().contentType(MediaType.parseMediaType(stored.contentType())).body(stored.bytes());
	}
}
