/**
 * Reading a file that has a size limit: at most one byte past the limit, so an oversized file is known
 * without reading it all, into a buffer sized by the file (100,000 small files must not each cost a
 * limit's buffer). Lint reads every file of a checkout this way, and `rules backtest` its rule file.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** Up to `limit + 1` bytes of a file: enough to know it is over the limit without reading it all. */
export function readBounded(path: string, limit: number): { bytes: Uint8Array } | { error: string } {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    return { error: `cannot read the file: ${(e as Error).message}` };
  }
  try {
    // Sized by the file, not the limit: 100,000 small files must not each cost a limit's buffer.
    const buf = Buffer.alloc(Math.min(fstatSync(fd).size, limit) + 1);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return { bytes: buf.subarray(0, n) };
  } catch (e) {
    return { error: `cannot read the file: ${(e as Error).message}` };
  } finally {
    closeSync(fd);
  }
}
