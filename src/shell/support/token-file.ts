/**
 * A token file read synchronously, for the command hook (which answers an agent and exits) and the
 * install's own token files. The same refusals as the daemon's `readTokenFile`: opened non-blocking, so a
 * FIFO in its place is refused rather than waited on; the opened file's own mode and size are checked.
 * `readSecretFileSync` is those refusals for any secret file (`[store] password_file`, its key_file).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** A token file holds one token and a newline; anything larger is not one. */
export const MAX_TOKEN_FILE_BYTES = 4096;

export type TokenFileRead = { readonly token: string } | { readonly problem: string; readonly code?: string };

export type SecretFileRead =
  | { readonly bytes: Buffer }
  | { readonly problem: string; readonly code?: string };

/**
 * A regular file readable by its owner only, of at most `maxBytes`: its bytes, or why not (the problem
 * names the file).
 */
export function readSecretFileSync(file: string, maxBytes: number, what = "file"): SecretFileRead {
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
      return { problem: `${file} is not a regular file (a FIFO, device or directory is no ${what})` };
    if (st.size > maxBytes)
      return { problem: `${file} is ${st.size} bytes long; a ${what} holds at most ${maxBytes}` };
    if ((st.mode & 0o077) !== 0)
      return { problem: `${file} is readable by group or others; run chmod 600 ${file}` };
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return { bytes: buf.subarray(0, n) };
  } catch (e) {
    return { problem: `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  } finally {
    closeSync(fd);
  }
}

export function readTokenFileSync(file: string): TokenFileRead {
  const read = readSecretFileSync(file, MAX_TOKEN_FILE_BYTES, "token file");
  if ("problem" in read) return read;
  const token = read.bytes.toString("utf8").trim();
  return /^[\x21-\x7e]+$/.test(token) ? { token } : { problem: `${file} does not hold a token` };
}
