package com.github.msbench.threadvsfiber;

import java.util.Optional;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.annotation.Transactional;

/** The images table (schema.sql, shared with the Gin service). */
@Repository
class ImageRepository {

	/** An image ready to store: the upload and its thumbnail. */
	record NewImage(String contentType, int width, int height, byte[] original, byte[] thumbnail) {
	}

	/** Stored bytes and the content type to serve them with. */
	record StoredBytes(String contentType, byte[] bytes) {
	}

	private final JdbcClient jdbc;

	ImageRepository(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/**
	 * Stores original and thumbnail in one transaction and returns the new id.
	 * The transaction is this method's alone, so no connection is held while
	 * the image is decoded and scaled.
	 */
	@Transactional
	long insert(NewImage image) {
		return jdbc.sql("""
				INSERT INTO images (content_type, size, thumbnail_size, width, height, original, thumbnail)
				VALUES (?, ?, ?, ?, ?, ?, ?)
				RETURNING id""")
			.params(image.contentType(), image.original().length, image.thumbnail().length, image.width(),
					image.height(), image.original(), image.thumbnail())
			.query(Long.class)
			.single();
	}

	Optional<StoredBytes> findOriginal(long id) {
		return jdbc.sql("SELECT content_type, original FROM images WHERE id = ?")
			.param(id)
			.query((rs, n) -> new StoredBytes(rs.getString(1), rs.getBytes(2)))
			.optional();
	}

	Optional<StoredBytes> findThumbnail(long id) {
		return jdbc.sql("SELECT content_type, thumbnail FROM images WHERE id = ?")
			.param(id)
			.query((rs, n) -> new StoredBytes(rs.getString(1), rs.getBytes(2)))
			.optional();
	}
}
