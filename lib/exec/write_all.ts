/**
 * Looping write: `Deno.FsFile.write` may accept fewer bytes than offered.
 *
 * @module
 */

/** Write every byte of `data` to `w`, looping over partial writes. */
export async function writeAll(
  w: { write(p: Uint8Array): Promise<number> },
  data: Uint8Array,
): Promise<void> {
  let off = 0;
  while (off < data.length) off += await w.write(data.subarray(off));
}
