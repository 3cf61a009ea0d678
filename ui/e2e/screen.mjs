// Screenshots from the X server's own framebuffer, not from WebDriver: Xvfb runs with
// `-fbdir`, so its screen is a file in XWD form that is always current. WebKitWebDriver's own
// screenshot sometimes never answers (and never in a second session); this one cannot hang.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crc32, deflateSync } from "node:zlib";

/** The PNG of Xvfb's screen 0, or null when there is no framebuffer file. */
export function screenPng(fbdir) {
  const file = readdirSync(fbdir).find((f) => f.startsWith("Xvfb_screen"));
  return file ? xwdToPng(readFileSync(join(fbdir, file))) : null;
}

export function saveScreen(fbdir, path) {
  const png = screenPng(fbdir);
  if (png) writeFileSync(path, png);
  return png !== null;
}

/** An XWD image (ZPixmap, 24 or 32 bits per pixel, as Xvfb writes it) as PNG (RGB). */
export function xwdToPng(xwd) {
  // The header is 25 big-endian 32-bit fields, then the window name and the colour map.
  const field = (i) => xwd.readUInt32BE(i * 4);
  const [headerSize, width, height, byteOrder, bitsPerPixel, bytesPerLine, ncolors] = [field(0), field(4), field(5), field(7), field(11), field(12), field(19)];
  const [redMask, greenMask, blueMask] = [field(14), field(15), field(16)];
  if (field(2) !== 2 || (bitsPerPixel !== 32 && bitsPerPixel !== 24)) throw new Error(`unsupported XWD: format ${field(2)}, ${bitsPerPixel} bpp`);
  const pixels = headerSize + ncolors * 12;
  const shift = (mask) => Math.clz32(mask & -mask) ^ 31; // the mask's lowest set bit
  const [rs, gs, bs] = [shift(redMask), shift(greenMask), shift(blueMask)];
  const bytes = bitsPerPixel / 8;
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = pixels + y * bytesPerLine;
    const out = y * (width * 3 + 1);
    raw[out] = 0; // no filter
    for (let x = 0; x < width; x++) {
      const at = row + x * bytes;
      const value = bytes === 4 ? (byteOrder === 0 ? xwd.readUInt32LE(at) : xwd.readUInt32BE(at)) : byteOrder === 0 ? xwd.readUIntLE(at, 3) : xwd.readUIntBE(at, 3);
      raw[out + 1 + x * 3] = (value & redMask) >>> rs;
      raw[out + 2 + x * 3] = (value & greenMask) >>> gs;
      raw[out + 3 + x * 3] = (value & blueMask) >>> bs;
    }
  }
  return rgbPng(width, height, raw);
}

/** A PNG (8-bit RGB) of `raw`: `height` rows of a filter byte and `width` RGB pixels each;
 * deflated at zlib's `level` (its default unless given). */
export function rgbPng(width, height, raw, level) {
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, no filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw, level === undefined ? {} : { level })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}
