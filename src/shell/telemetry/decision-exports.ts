/**
 * The decision export in force, which `harness reload` replaces (docs/telemetry.md, "Reload"): a changed
 * `[otel]` endpoint or protocol, a headers file whose content changed (a collector token rotated), or
 * `[otel]` added or removed, applies to the decisions taken from the reload on. The observer the daemon
 * holds stays the same; only what it hands records to changes.
 *
 * The headers file is read when a reload is prepared, before anything is swapped, so a bad file fails
 * the reload and leaves the export in force. The export replaced sends what it still holds, with its
 * own headers and bounded in time, while the new one takes the next decisions.
 */
import type { OtelConfig } from "../config/global-config.js";
import type { DecisionObserver } from "../daemon/actions.js";
import type { DecisionExport } from "./decision-export.js";
import { readOtlpHeaders } from "./otlp-headers.js";

/** Starts an export to `config`'s collector with `headers`. */
export type StartExport = (config: OtelConfig, headers: Readonly<Record<string, string>>) => DecisionExport;

interface InForce {
  readonly export: DecisionExport;
  /** What tells one export's settings from another's: endpoint, protocol and the headers' content. */
  readonly settings: string;
}

export class DecisionExports {
  private inForce: InForce | undefined;
  /** Replaced exports still sending what they held. */
  private readonly retiring = new Set<Promise<void>>();

  constructor(private readonly start: StartExport) {}

  /** The daemon's one observer of decisions: hands each to the export in force, if any. */
  readonly observer: DecisionObserver = (d) => this.inForce?.export.observer(d);

  /**
   * Reads `otel`'s headers file now (throwing `OtlpHeadersError` when it cannot be used) and returns
   * what puts `otel` in force: nothing changes when the settings are the ones in force.
   */
  prepare(otel: OtelConfig | undefined): () => void {
    const headers = otel?.headersFile === undefined ? {} : readOtlpHeaders(otel.headersFile);
    const settings = otel === undefined ? undefined : JSON.stringify([otel.endpoint, otel.protocol, headers]);
    return () => {
      if (settings === this.inForce?.settings) return;
      const replaced = this.inForce?.export;
      this.inForce =
        otel === undefined || settings === undefined
          ? undefined
          : { export: this.start(otel, headers), settings };
      if (replaced !== undefined) {
        const done = replaced.shutdown();
        this.retiring.add(done);
        void done.finally(() => this.retiring.delete(done));
      }
    };
  }

  /** Whether an export is in force. */
  get exporting(): boolean {
    return this.inForce !== undefined;
  }

  /** Sends what the export in force holds (tests, and the bench). */
  async flush(): Promise<void> {
    await this.inForce?.export.flush();
  }

  /** At stop: what every export still holds is sent, each for a bounded time. */
  async shutdown(): Promise<void> {
    const last = this.inForce?.export;
    this.inForce = undefined;
    await Promise.all([last?.shutdown(), ...this.retiring]);
  }
}
