/**
 * A token file read synchronously, for the command hook (which answers an agent and exits) and the
 * install's own token files. The same refusals as the daemon's `readTokenFile`: opened non-blocking, so a
 * FIFO in its place is refused rather than waited on; the opened file's own mode and size are checked.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** A token file holds one token and a newline; anything larger is not one. */
export const MAX_TOKEN_FILE_BYTES = 4096;

export type TokenFileRead = { readonly token: string } | { readonly problem: string; readonly code?: string };

export function readTokenFileSync(file: string): TokenFileRead {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { problem: `cannot read ${file}: ${code ?? (e as Error).message}`, ...(code ? { code } : {}) };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile())
      return { problem: `${file} is not a regular file (a FIFO, device or directory holds no token)` };
    if (st.size > MAX_TOKEN_FILE_BYTES)
      return {
        problem: `${file} is ${st.size} bytes long; a token file holds at most ${MAX_TOKEN_FILE_BYTES}`,
      };
    if ((st.mode & 0o077) !== 0)
      return { problem: `${file} is readable by group or others; run chmod 600 ${file}` };
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    const token = buf.subarray(0, n).toString("utf8").trim();
    return /^[\x21-\x7e]+$/.test(token) ? { token } : { problem: `${file} does not hold a token` };
  } catch (e) {
    return { problem: `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  } finally {
    closeSync(fd);
  }
}
