package com.github.msbench.threadvsfiber;

import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.Optional;
import javax.imageio.IIOImage;
import javax.imageio.ImageIO;
import javax.imageio.ImageReader;
import javax.imageio.ImageWriteParam;
import javax.imageio.ImageWriter;
import javax.imageio.stream.ImageInputStream;
import javax.imageio.stream.ImageOutputStream;
import javax.imageio.stream.MemoryCacheImageInputStream;
import javax.imageio.stream.MemoryCacheImageOutputStream;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;

/** The two accepted formats, recognised by their leading bytes, never by the client's word. */
enum ImageFormat {

	PNG("image/png", "png", new byte[] { (byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' }),
	JPEG("image/jpeg", "jpeg", new byte[] { (byte) 0xff, (byte) 0xd8, (byte) 0xff });

	/** JPEG quality of re-encoded thumbnails; Go's image/jpeg default, used by the Gin service too. */
	private static final float JPEG_QUALITY = 0.75f;

	final String mediaType;
	private final String imageIoName;
	private final byte[] magic;

	ImageFormat(String mediaType, String imageIoName, byte[] magic) {
		this.mediaType = mediaType;
		this.imageIoName = imageIoName;
		this.magic = magic;
	}

	static Optional<ImageFormat> sniff(byte[] data) {
		for (ImageFormat f : values()) {
			if (data.length >= f.magic.length && Arrays.equals(data, 0, f.magic.length, f.magic, 0, f.magic.length)) {
				return Optional.of(f);
			}
		}
		return Optional.empty();
	}

	/**
	 * Decodes with this format's reader only, so bytes that merely start like
	 * a PNG are not handed to another decoder. Memory-cached streams: ImageIO's
	 * default would spill every stream to a temp file. The reader allocates
	 * the whole image from the header's dimensions, so a small, highly
	 * compressed file can declare gigabytes of pixels: more than maxPixels is
	 * refused (413) from the header alone, before any pixel is read.
	 */
	BufferedImage decode(byte[] data, long maxPixels) throws IOException {
		ImageReader reader = ImageIO.getImageReadersByFormatName(imageIoName).next();
		try (ImageInputStream in = new MemoryCacheImageInputStream(new ByteArrayInputStream(data))) {
			reader.setInput(in, true, true);
			int width = reader.getWidth(0);
			int height = reader.getHeight(0);
			if ((long) width * height > maxPixels) {
				throw new ResponseStatusException(HttpStatus.PAYLOAD_TOO_LARGE, "image of " + width + "x" + height
						+ " pixels is larger than the limit of " + maxPixels + " pixels");
			}
			return reader.read(0);
		}
		finally {
			reader.dispose();
		}
	}

	byte[] encode(BufferedImage image) throws IOException {
		ImageWriter writer = ImageIO.getImageWritersByFormatName(imageIoName).next();
		ImageWriteParam param = writer.getDefaultWriteParam();
		if (this == JPEG) {
			param.setCompressionMode(ImageWriteParam.MODE_EXPLICIT);
			param.setCompressionQuality(JPEG_QUALITY);
		}
		ByteArrayOutputStream buf = new ByteArrayOutputStream();
		try (ImageOutputStream out = new MemoryCacheImageOutputStream(buf)) {
			writer.setOutput(out);
			writer.write(null, new IIOImage(image, null, null), param);
		}
		finally {
			writer.dispose();
		}
		return buf.toByteArray();
	}
}
