/**
 * `harness tui` in a real terminal: tmux on its own server (`-L`, no user config), the built CLI in a
 * session of a given size, `send-keys` to act and `capture-pane` to read the screen, as a person would.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { CLI } from "../daemon-harness.js";

export class TmuxTui {
  private readonly server = `harness-tui-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private readonly session = "tui";

  private tmux(...args: string[]): string {
    return execFileSync("tmux", ["-L", this.server, "-f", "/dev/null", ...args], { encoding: "utf8" });
  }

  /** Starts `harness tui` with `env` (and nothing else of the test's environment) on a `width`×`height` terminal. */
  start(env: NodeJS.ProcessEnv, args: readonly string[], width = 80, height = 24): void {
    const assignments = Object.entries(env)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${shellQuote(v as string)}`);
    const command = `env -i ${assignments.join(" ")} TERM=xterm-256color ${shellQuote(process.execPath)} ${shellQuote(CLI)} tui ${args.map(shellQuote).join(" ")}; sleep 3600`;
    this.tmux("new-session", "-d", "-s", this.session, "-x", String(width), "-y", String(height), command);
  }

  keys(...keys: string[]): void {
    this.tmux("send-keys", "-t", this.session, ...keys);
  }

  /** The screen as text, one line per row. */
  screen(): string {
    return this.tmux("capture-pane", "-p", "-t", this.session);
  }

  /** The screen with its attributes, as escape sequences (to see what is inverse or coloured). */
  screenWithAttributes(): string {
    return this.tmux("capture-pane", "-p", "-e", "-t", this.session);
  }

  /** Polls the screen until `test` holds; returns that screen and how long it took. */
  async until(
    test: (screen: string) => boolean,
    what: string,
    timeoutMs = 10_000,
  ): Promise<{ screen: string; ms: number }> {
    const start = performance.now();
    let screen = "";
    for (;;) {
      screen = this.screen();
      if (test(screen)) return { screen, ms: performance.now() - start };
      if (performance.now() - start > timeoutMs)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the screen:\n${screen}`);
      await new Promise((r) => setTimeout(r, 15));
    }
  }

  /** The pid of the process the pane runs (the shell running `harness tui`). */
  panePid(): number {
    return Number(this.tmux("display-message", "-p", "-t", this.session, "#{pane_pid}").trim());
  }

  stop(): void {
    spawnSync("tmux", ["-L", this.server, "kill-server"]);
  }
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
