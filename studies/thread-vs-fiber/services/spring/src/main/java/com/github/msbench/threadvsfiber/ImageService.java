package com.github.msbench.threadvsfiber;

import static org.springframework.http.HttpStatus.NOT_FOUND;
import static org.springframework.http.HttpStatus.UNSUPPORTED_MEDIA_TYPE;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.github.msbench.threadvsfiber.ImageRepository.NewImage;
import com.github.msbench.threadvsfiber.ImageRepository.StoredBytes;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.function.LongFunction;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;
import org.springframework.web.server.ResponseStatusException;

/** Checks, thumbnails and stores uploads; serves them back. */
@Service
class ImageService {

	/** Longest side of a thumbnail, in pixels. */
	static final int THUMBNAIL_SIDE = 128;

	/** What the POST answers. */
	@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
	record CreatedImage(long id, String contentType, int size, int thumbnailSize, int width, int height) {
	}

	private final ImageRepository repository;

	/** Largest accepted image in pixels (width times height), checked before decoding. */
	private final long maxPixels;

	ImageService(ImageRepository repository, @Value("${images.max-pixels}") long maxPixels) {
		this.repository = repository;
		this.maxPixels = maxPixels;
	}

	/**
	 * Unlike the Gin service, this does not stop between stages when the
	 * client goes away: a servlet learns that only when it reads or writes
	 * the socket, and the body is already read. The pixel limit bounds the
	 * work an abandoned request can still do.
	 */
	CreatedImage store(byte[] upload, ServerTiming timing) {
		ImageFormat format;
		BufferedImage image;
		try (var stage = timing.stage("decode")) {
			format = ImageFormat.sniff(upload)
				.orElseThrow(() -> new ResponseStatusException(UNSUPPORTED_MEDIA_TYPE, "not a JPEG or PNG image"));
			image = decode(upload, format);
		}

		byte[] thumbnail;
		try (var stage = timing.stage("process")) {
			thumbnail = format.encode(thumbnail(image));
		}
		catch (IOException e) {
			throw new UncheckedIOException("encoding " + format.mediaType + " thumbnail", e);
		}

		long id;
		try (var stage = timing.stage("persist")) {
			id = repository
				.insert(new NewImage(format.mediaType, image.getWidth(), image.getHeight(), upload, thumbnail));
		}
		return new CreatedImage(id, format.mediaType, upload.length, thumbnail.length, image.getWidth(),
				image.getHeight());
	}

	StoredBytes original(long id, ServerTiming timing) {
		return fetch(id, timing, repository::findOriginal);
	}

	StoredBytes thumbnail(long id, ServerTiming timing) {
		return fetch(id, timing, repository::findThumbnail);
	}

	private static StoredBytes fetch(long id, ServerTiming timing, LongFunction<Optional<StoredBytes>> query) {
		try (var stage = timing.stage("fetch")) {
			return query.apply(id).orElseThrow(() -> new ResponseStatusException(NOT_FOUND, "no image " + id));
		}
	}

	private BufferedImage decode(byte[] upload, ImageFormat format) {
		try {
			return format.decode(upload, maxPixels);
		}
		catch (ResponseStatusException e) {
			throw e;
		}
		catch (IOException | RuntimeException e) {
			// Decoders report corrupt data as IIOException or as runtime
			// exceptions from deep inside; either way the client sent a bad image.
			throw new ResponseStatusException(UNSUPPORTED_MEDIA_TYPE,
					"cannot decode " + format.mediaType + ": " + e.getMessage(), e);
		}
	}

	/** Scales so the longer side is THUMBNAIL_SIDE, keeping the aspect ratio (rounded, at least 1 px). */
	private static BufferedImage thumbnail(BufferedImage image) {
		int w = image.getWidth();
		int h = image.getHeight();
		if (w >= h) {
			return CatmullRom.scale(image, THUMBNAIL_SIDE, Math.max(1, (h * THUMBNAIL_SIDE + w / 2) / w));
		}
		return CatmullRom.scale(image, Math.max(1, (w * THUMBNAIL_SIDE + h / 2) / h), THUMBNAIL_SIDE);
	}
}
