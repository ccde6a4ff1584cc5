package com.github.msbench.threadvsfiber;

import java.awt.image.BufferedImage;

/**
 * Separable Catmull-Rom resampling, the algorithm of Go's
 * {@code golang.org/x/image/draw.CatmullRom} that the Gin service uses, so both
 * services do the same arithmetic. Java2D's bicubic interpolation is not used:
 * it samples a fixed 4x4 neighbourhood and aliases when shrinking, whereas
 * this kernel widens with the reduction factor, as x/image/draw's does.
 * Colour is filtered with premultiplied alpha.
 */
final class CatmullRom {

	private static final double SUPPORT = 2;

	private CatmullRom() {
	}

	/** Returns src scaled to width x height, with an alpha channel only when src has one. */
	static BufferedImage scale(BufferedImage src, int width, int height) {
		int sw = src.getWidth();
		int sh = src.getHeight();
		boolean alpha = src.getColorModel().hasAlpha();
		Taps xt = Taps.of(sw, width);
		Taps yt = Taps.of(sh, height);

		// Horizontal pass, one source row at a time: sh rows of width pixels, 4 channels (a, r, g, b).
		double[] rows = new double[sh * width * 4];
		int[] line = new int[sw];
		for (int y = 0; y < sh; y++) {
			src.getRGB(0, y, sw, 1, line, 0, sw);
			for (int x = 0; x < width; x++) {
				double a = 0, r = 0, g = 0, b = 0;
				double[] w = xt.weights[x];
				for (int i = 0, s = xt.first[x]; i < w.length; i++, s++) {
					int p = line[s];
					double pa = (p >>> 24) * w[i];
					a += pa;
					// Premultiply: a transparent pixel's colour must not bleed into its neighbours.
					r += ((p >> 16) & 0xff) * pa;
					g += ((p >> 8) & 0xff) * pa;
					b += (p & 0xff) * pa;
				}
				int o = (y * width + x) * 4;
				rows[o] = a;
				rows[o + 1] = r / 255;
				rows[o + 2] = g / 255;
				rows[o + 3] = b / 255;
			}
		}

		BufferedImage dst = new BufferedImage(width, height, alpha ? BufferedImage.TYPE_INT_ARGB : BufferedImage.TYPE_INT_RGB);
		int[] out = new int[width];
		for (int y = 0; y < height; y++) {
			double[] w = yt.weights[y];
			for (int x = 0; x < width; x++) {
				double a = 0, r = 0, g = 0, b = 0;
				for (int i = 0, s = yt.first[y]; i < w.length; i++, s++) {
					int o = (s * width + x) * 4;
					a += rows[o] * w[i];
					r += rows[o + 1] * w[i];
					g += rows[o + 2] * w[i];
					b += rows[o + 3] * w[i];
				}
				int ca = clamp(a);
				if (ca == 0) {
					out[x] = 0;
					continue;
				}
				double un = 255.0 / (alpha ? a : 255);
				out[x] = ca << 24 | clamp(r * un) << 16 | clamp(g * un) << 8 | clamp(b * un);
			}
			dst.setRGB(0, y, width, 1, out, 0, width);
		}
		return dst;
	}

	private static int clamp(double v) {
		return (int) Math.max(0, Math.min(255, Math.round(v)));
	}

	/** The Catmull-Rom cubic (B=0, C=1/2), zero outside [-2, 2]. */
	private static double kernel(double t) {
		t = Math.abs(t);
		if (t < 1) {
			return (1.5 * t - 2.5) * t * t + 1;
		}
		if (t < 2) {
			return ((-0.5 * t + 2.5) * t - 4) * t + 2;
		}
		return 0;
	}

	/** For each destination index, the first source index it reads and the normalised weights. */
	private record Taps(int[] first, double[][] weights) {

		static Taps of(int srcLen, int dstLen) {
			double scale = (double) srcLen / dstLen;
			// Shrinking stretches the kernel over more source pixels (a low-pass filter); enlarging does not.
			double stretch = Math.max(scale, 1);
			double radius = SUPPORT * stretch;
			int[] first = new int[dstLen];
			double[][] weights = new double[dstLen][];
			for (int d = 0; d < dstLen; d++) {
				double center = (d + 0.5) * scale;
				int lo = Math.max(0, (int) Math.floor(center - radius));
				int hi = Math.min(srcLen, (int) Math.ceil(center + radius));
				double[] w = new double[hi - lo];
				double sum = 0;
				for (int s = lo; s < hi; s++) {
					w[s - lo] = kernel((s + 0.5 - center) / stretch);
					sum += w[s - lo];
				}
				for (int i = 0; i < w.length; i++) {
					w[i] /= sum;
				}
				first[d] = lo;
				weights[d] = w;
			}
			return new Taps(first, weights);
		}
	}
}
