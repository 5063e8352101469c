/**
 * One gateway session's MCP transport: newline-delimited JSON-RPC over its socket, as MCP's stdio
 * transport frames it, with every line answered. The SDK's stdio transport drops
 * a line it cannot use and leaves its caller waiting; this one answers, as JSON-RPC 2.0 asks:
 * a line that is not JSON gets -32700 (Parse error), a batch -32600 (Invalid Request: MCP 2025-06-18
 * removed batching, and the SDK in use handles one message at a time), and JSON that is not a JSON-RPC
 * message -32600 with its id when it has one. A line over `maxLineBytes` ends the session.
 */
import type * as net from "node:net";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

type Id = string | number | null;

export class SocketLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private closed = false;

  constructor(
    private readonly socket: net.Socket,
    /** What arrived after the token preamble, before this transport started. */
    private readonly initial: Buffer,
    private readonly maxLineBytes: number,
  ) {}

  async start(): Promise<void> {
    this.socket.on("data", this.onData);
    this.socket.once("close", () => void this.close());
    this.onData(this.initial);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.socket.off("data", this.onData);
    this.pending = [];
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer): void => {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0 && !this.closed; nl = chunk.indexOf(0x0a, start)) {
      const tail = chunk.subarray(start, nl);
      const line = this.pendingBytes === 0 ? tail : Buffer.concat([...this.pending, tail]);
      this.pending = [];
      this.pendingBytes = 0;
      start = nl + 1;
      if (line.length > this.maxLineBytes) {
        this.tooLong();
        return;
      }
      this.line(line);
    }
    if (this.closed || start >= chunk.length) return;
    this.pending.push(chunk.subarray(start));
    this.pendingBytes += chunk.length - start;
    if (this.pendingBytes > this.maxLineBytes) this.tooLong();
  };

  private tooLong(): void {
    this.onerror?.(new Error(`a message is longer than ${this.maxLineBytes} bytes`));
    void this.close();
  }

  private line(bytes: Buffer): void {
    const text = bytes.toString("utf8");
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      void this.answer(null, PARSE_ERROR, "Parse error: the line is not JSON");
      return;
    }
    if (Array.isArray(value)) {
      void this.answer(
        null,
        INVALID_REQUEST,
        "Invalid Request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18); send one message a line",
      );
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      void this.answer(idOf(value), INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message");
      return;
    }
    this.onmessage?.(parsed.data);
  }

  private answer(id: Id, code: number, message: string): Promise<void> {
    return this.write({ jsonrpc: "2.0", id, error: { code, message } });
  }

  private write(message: unknown): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || this.socket.destroyed) return resolve();
      if (this.socket.write(`${JSON.stringify(message)}\n`)) resolve();
      else {
        const done = (): void => {
          this.socket.off("drain", done);
          this.socket.off("close", done);
          resolve();
        };
        this.socket.on("drain", done);
        this.socket.on("close", done);
      }
    });
  }
}

/** The id of a message that is not valid JSON-RPC, when it carries one JSON-RPC allows. */
function idOf(value: unknown): Id {
  if (typeof value !== "object" || value === null) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
