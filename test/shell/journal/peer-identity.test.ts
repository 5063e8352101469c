/**
 * Decision 0014: a row admitted with a client certificate's identity (an Append over mutual TLS) keeps it
 * beside the row, in `peer_name` and `peer_fingerprint` (V13), and never in its event; other rows keep NULL.
 */
import { describe, expect, it } from "vitest";
import { admitEvents } from "../../../src/shell/journal/admit.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { journalPeers, journalRows } from "../../support/store-reads.js";
import { tempStores } from "../store/temp-stores.js";
import { testWriter } from "./test-writer.js";

const { storeFile, open } = tempStores("harness-peer-");
const PEER = { name: "laptop-1", fingerprint: "AB:CD" } as const;
const EVENT = { kind: "run_event", type: "mark", mark: "user-message", harness: "impl", run: "impl#1" };

describe("the client certificate beside the row", () => {
  it("an admitted row records its peer; a row without one records NULL; the event never holds it", async () => {
    const { db } = open(storeFile());
    const writer = testWriter(db, new JournalTable(db), { clock: () => 1_000 });
    const withPeer = admitEvents(writer, "observer", [EVENT], undefined, { peer: PEER });
    const without = admitEvents(writer, "observer", [EVENT]);
    await writer.flush();
    expect(await withPeer).toEqual([{ kind: "admitted", seq: 1 }]);
    expect(await without).toEqual([{ kind: "admitted", seq: 2 }]);
    expect(journalPeers(db).map((r) => [r.seq, r.peerName, r.peerFingerprint])).toEqual([
      [1, "laptop-1", "AB:CD"],
      [2, null, null],
    ]);
    for (const r of journalRows(db)) expect(JSON.stringify(r.event)).not.toContain("laptop-1");
  });
});
