/**
 * Width and height from a PNG, JPEG or WebP header, or null when the bytes are none of these.
 * OCR decodes the whole bitmap (several bytes a pixel, more inside Tesseract), so the image
 * converter checks the pixel count first: the image equivalent of the zip-bomb guard.
 */
export function imageSize(b: Buffer): { width: number; height: number; type: 'png' | 'jpeg' | 'webp' } | null {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR') {
    return { width: b.readUInt32BE(16), height: b.readUInt32BE(20), type: 'png' };
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpegSize(b);
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return webpSize(b);
  return null;
}

/** The first start-of-frame segment's dimensions; other segments are skipped by their length. */
function jpegSize(b: Buffer): { width: number; height: number; type: 'jpeg' } | null {
  let p = 2;
  while (p + 4 <= b.length) {
    if (b[p] !== 0xff) return null;
    const marker = b[p + 1]!;
    if (marker === 0xff) {
      p++;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd9)) {
      p += 2;
      continue;
    }
    const length = b.readUInt16BE(p + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame && p + 9 <= b.length) return { height: b.readUInt16BE(p + 5), width: b.readUInt16BE(p + 7), type: 'jpeg' };
    p += 2 + length;
  }
  return null;
}

function webpSize(b: Buffer): { width: number; height: number; type: 'webp' } | null {
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff, type: 'webp' };
  if (chunk === 'VP8L') {
    const bits = b.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1, type: 'webp' };
  }
  if (chunk === 'VP8X') return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1, type: 'webp' };
  return null;
}
