/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum TFRecord framing uses, and
 * TensorFlow's "masked" form of it. A 256-entry table, one byte per step: event files are small
 * (one record per logged step), so speed does not matter here.
 */

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/**
 * CRC-32C of `bytes`.
 * @example crc32c(new TextEncoder().encode('123456789')) // 0xe3069283
 */
export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = (TABLE[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * TFRecord's masked CRC: rotate right by 15 bits and add a constant, so that a CRC of data that
 * itself contains CRCs does not degenerate (TensorFlow `crc32c::Mask`).
 * @example maskedCrc32c(bytes) === ((((c >>> 15) | (c << 17)) + 0xa282ead8) >>> 0)
 */
export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = crc32c(bytes);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}
