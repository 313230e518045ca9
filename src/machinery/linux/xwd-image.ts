/**
 * Decodes a screen grab in X Window Dump format into a binary PPM. The grab comes from inside the
 * machine, where a sample may have replaced the X server, so it is untrusted input: it is parsed here,
 * bounds-checked field by field, rather than by a C image library on the host. Only what a TrueColor
 * screen produces is accepted (ZPixmap, channel masks, 32 bits per pixel or 24: xwd packs Xvfb's screen
 * in 3 bytes per pixel, its lines still as long as 4 would take, once Wine's display driver drew on it).
 */
const HEADER_FIELDS = 25;
const ZPIXMAP = 2;
const COLOR_ENTRY_BYTES = 12;
const MAX_SIDE = 8192;

export interface DecodedImage {
  width: number;
  height: number;
  /** Binary PPM (P6) of the image. */
  ppm: Buffer;
}

export function decodeXwd(data: Buffer): DecodedImage {
  if (data.length < HEADER_FIELDS * 4) throw new Error('screen grab too short');
  const field = (index: number) => data.readUInt32BE(index * 4);
  const [headerSize, format, width, height, byteOrder, bitsPerPixel, bytesPerLine] = [field(0), field(2), field(4), field(5), field(7), field(11), field(12)];
  const masks = [field(14), field(15), field(16)];
  const colors = field(19);
  if (format !== ZPIXMAP || (bitsPerPixel !== 32 && bitsPerPixel !== 24)) throw new Error(`unsupported screen grab (format ${format}, ${bitsPerPixel} bits per pixel)`);
  if (width < 1 || height < 1 || width > MAX_SIDE || height > MAX_SIDE) throw new Error(`unlikely screen size ${width}x${height}`);
  const bytesPerPixel = bitsPerPixel / 8;
  if (bytesPerLine < width * bytesPerPixel || masks.some((mask) => mask === 0)) throw new Error('inconsistent screen grab header');
  const pixelsAt = headerSize + colors * COLOR_ENTRY_BYTES;
  if (headerSize < HEADER_FIELDS * 4 || pixelsAt + bytesPerLine * (height - 1) + width * bytesPerPixel > data.length) {
    throw new Error('screen grab shorter than its header says');
  }
  const shifts = masks.map(lowestBit);
  const scales = masks.map((mask, index) => 255 / (mask >>> shifts[index]!));
  const header = Buffer.from(`P6\n${width} ${height}\n255\n`);
  const ppm = Buffer.alloc(header.length + width * height * 3);
  header.copy(ppm);
  let out = header.length;
  for (let y = 0; y < height; y++) {
    const row = pixelsAt + y * bytesPerLine;
    for (let x = 0; x < width; x++) {
      const at = row + x * bytesPerPixel;
      const pixel = bytesPerPixel === 4 ? (byteOrder === 0 ? data.readUInt32LE(at) : data.readUInt32BE(at)) : byteOrder === 0 ? data.readUIntLE(at, 3) : data.readUIntBE(at, 3);
      for (let channel = 0; channel < 3; channel++) {
        ppm[out++] = Math.round((((pixel & masks[channel]!) >>> 0) >>> shifts[channel]!) * scales[channel]!);
      }
    }
  }
  return { width, height, ppm };
}

function lowestBit(mask: number): number {
  let shift = 0;
  while (shift < 32 && ((mask >>> shift) & 1) === 0) shift++;
  return shift;
}
