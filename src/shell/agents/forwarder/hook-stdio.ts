/**
 * The command hook's stdin and stdout as plain reads and writes on descriptors 0 and 1. `process.stdin`
 * and `process.stdout` build a stream object per descriptor (for a file, `fs` streams with their
 * promise API and readline in tow) that a hook, which reads one payload and writes one answer, does
 * not need. A descriptor left non-blocking by whoever made it (a read or write then fails with EAGAIN)
 * goes back to the stream, which waits for it properly.
 */
import * as fs from "node:fs";

const CHUNK = 64 * 1024;

const wouldBlock = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === "EAGAIN";

/** Stdin through `process.stdin`, up to `limit` bytes; `undefined` past it (the rest is read and discarded). */
function readStream(stdin: NodeJS.ReadableStream, limit: number, head: Buffer[], read: number) {
  return new Promise<Buffer | undefined>((resolve) => {
    const chunks = head;
    let size = read;
    stdin.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= limit) chunks.push(c);
    });
    stdin.on("end", () => resolve(size > limit ? undefined : Buffer.concat(chunks)));
    stdin.on("error", () => resolve(size > limit ? undefined : Buffer.concat(chunks)));
  });
}

/** Stdin up to its end, at most `limit` bytes kept; `undefined` when it is longer (the rest is discarded). */
export function readStdin(limit: number, stdin: () => NodeJS.ReadableStream): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const buf = Buffer.allocUnsafe(CHUNK);
    let n: number;
    try {
      n = fs.readSync(0, buf, 0, CHUNK, null);
    } catch (e) {
      if (wouldBlock(e)) return readStream(stdin(), limit, chunks, size);
      // A closed or unreadable stdin: what was read is the payload, as a stream's error would leave it.
      break;
    }
    if (n === 0) break;
    size += n;
    if (size <= limit) chunks.push(buf.subarray(0, n));
  }
  return Promise.resolve(size > limit ? undefined : Buffer.concat(chunks));
}

/**
 * Writes `text` to descriptor `fd` (1 or 2); resolves once it is written, at once unless the descriptor
 * would block and the rest went to the stream, so the process may exit as soon as it resolves.
 */
export function writeAll(fd: 1 | 2, text: string, stream: () => NodeJS.WritableStream): Promise<void> {
  const data = Buffer.from(text, "utf8");
  let off = 0;
  while (off < data.length) {
    try {
      off += fs.writeSync(fd, data, off, data.length - off);
    } catch (e) {
      if (!wouldBlock(e)) return Promise.resolve();
      const rest = data.subarray(off);
      return new Promise((resolve) => stream().write(rest, () => resolve()));
    }
  }
  return Promise.resolve();
}
