/**
 * A Unix-socket proxy in front of the daemon's socket that records the path of every request it
 * forwards (`/harness.v1.RuleService/ListFires`): the calls a client really makes, streams included.
 */
import * as http from "node:http";

export class RecordingProxy {
  readonly calls: string[] = [];
  private server: http.Server | undefined;

  constructor(
    readonly socketPath: string,
    private readonly target: string,
  ) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      this.calls.push(req.url ?? "");
      const out = http.request(
        { socketPath: this.target, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on("error", () => res.destroy());
      res.on("close", () => out.destroy());
      req.pipe(out);
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(this.socketPath, resolve));
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** The methods called, `harness.v1.RuleService/ListFires`, each once. */
  methods(): string[] {
    return [...new Set(this.calls.map((c) => c.replace(/^\//, "")))].sort();
  }
}
