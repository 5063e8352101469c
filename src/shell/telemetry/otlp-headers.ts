/**
 * `[otel] headers_file`: the headers an OTLP collector wants (an API key, a tenant), one `Name: value` a
 * line. Secrets stay out of the config and argv: the file must be a regular file readable by its owner
 * only, and bounded before it is read.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

export const MAX_HEADERS_FILE_BYTES = 16 * 1024;
export const MAX_HEADERS = 32;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;
const HEADER_VALUE = /^[\x20-\x7e]{0,4096}$/;

/** A headers file that cannot be used: the file, and the line and column of a bad line. */
export class OtlpHeadersError extends Error {
  constructor(
    readonly file: string,
    readonly at: { readonly line: number; readonly column: number } | undefined,
    message: string,
  ) {
    super(`${file}${at === undefined ? "" : `:${at.line}:${at.column}`}: ${message}`);
    this.name = "OtlpHeadersError";
  }
}

export function readOtlpHeaders(file: string): Record<string, string> {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new OtlpHeadersError(
      file,
      undefined,
      code === "ENOENT" ? "does not exist" : `cannot read: ${code ?? (e as Error).message}`,
    );
  }
  let text: string;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new OtlpHeadersError(file, undefined, "not a regular file");
    if (st.size > MAX_HEADERS_FILE_BYTES)
      throw new OtlpHeadersError(file, undefined, `${st.size} bytes; at most ${MAX_HEADERS_FILE_BYTES}`);
    if ((st.mode & 0o077) !== 0)
      throw new OtlpHeadersError(file, undefined, `readable by group or others; run chmod 600 ${file}`);
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    text = buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
  return parseOtlpHeaders(text, file);
}

export function parseOtlpHeaders(text: string, file: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").replace(/\r$/, "");
    if (line.trim() === "" || line.startsWith("#")) continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? "" : line.slice(0, colon).trim();
    const rest = colon < 0 ? "" : line.slice(colon + 1);
    const value = rest.trim();
    const at = (column: number) => ({ line: i + 1, column });
    if (!HEADER_NAME.test(name)) throw new OtlpHeadersError(file, at(1), "want `Name: value`");
    if (!HEADER_VALUE.test(value))
      throw new OtlpHeadersError(
        file,
        at(colon + 2 + (rest.length - rest.trimStart().length)),
        `the value of ${name} is not printable ASCII (or longer than 4096 characters)`,
      );
    if (Object.keys(headers).length >= MAX_HEADERS)
      throw new OtlpHeadersError(file, at(1), `more than ${MAX_HEADERS} headers`);
    headers[name] = value;
  }
  return headers;
}
