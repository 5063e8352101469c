/**
 * A scripted stand-in for the Anthropic Messages API, enough for the real Claude Code to run headless
 * (`claude -p`) against it: every request with tools and no tool result yet is answered with one Bash
 * tool call, streamed as the API streams it (message_start, a tool_use block with its input as one
 * input_json_delta, message_delta with stop_reason tool_use, message_stop); every other request with
 * the text "done". It records the tool results Claude Code sends back, which say whether the tool ran.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

export interface ToolResult {
  readonly content: unknown;
  readonly is_error?: boolean;
}

export interface ScriptedModel {
  readonly url: string;
  /** The tool results of every request so far, in order. */
  readonly toolResults: ToolResult[];
  close(): Promise<void>;
}

type Block =
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: unknown }
  | { readonly type: "text"; readonly text: string };

function events(content: readonly Block[], stop: string): string {
  const e = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  return [
    e("message_start", {
      message: {
        id: "msg_scripted",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    }),
    ...content.flatMap((c, index) =>
      c.type === "tool_use"
        ? [
            e("content_block_start", {
              index,
              content_block: { type: "tool_use", id: c.id, name: c.name, input: {} },
            }),
            e("content_block_delta", {
              index,
              delta: { type: "input_json_delta", partial_json: JSON.stringify(c.input) },
            }),
            e("content_block_stop", { index }),
          ]
        : [
            e("content_block_start", { index, content_block: { type: "text", text: "" } }),
            e("content_block_delta", { index, delta: { type: "text_delta", text: c.text } }),
            e("content_block_stop", { index }),
          ],
    ),
    e("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 1 } }),
    e("message_stop", {}),
  ].join("");
}

/** Starts the model on loopback; its one tool call runs `command` with Bash. */
export function scriptedModel(command: string): Promise<ScriptedModel> {
  const toolResults: ToolResult[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("end", () => {
      let body: { tools?: unknown[]; messages?: { content?: unknown }[] } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        // Not a messages request: answered below like one without tools.
      }
      if (!req.url?.startsWith("/v1/messages") || req.url.includes("count_tokens")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ input_tokens: 1 }));
        return;
      }
      const last = body.messages?.at(-1)?.content;
      const results = Array.isArray(last)
        ? (last as { type?: string }[]).filter((c) => c.type === "tool_result")
        : [];
      toolResults.push(...(results as ToolResult[]));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(
        (body.tools?.length ?? 0) > 0 && results.length === 0
          ? events(
              [
                {
                  type: "tool_use",
                  id: "toolu_scripted",
                  name: "Bash",
                  input: { command, description: "run" },
                },
              ],
              "tool_use",
            )
          : events([{ type: "text", text: "done" }], "end_turn"),
      );
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        toolResults,
        close: () => new Promise((done) => server.close(() => done())),
      }),
    ),
  );
}
