/**
 * The worker of `pg-calling.bench.ts`: answers the main thread's query, one at a time, over a shared
 * buffer (state word 0: 0 idle, 1 asked, 2 answered; then the text's length and bytes), running it on
 * its own node-postgres pool, so the main thread can wait for it with `Atomics.wait`.
 */
import { workerData } from "node:worker_threads";
import pg from "pg";

const { buffer, options } = workerData as { buffer: SharedArrayBuffer; options: pg.PoolConfig };
const state = new Int32Array(buffer, 0, 2);
const bytes = new Uint8Array(buffer, 8);
const pool = new pg.Pool({ ...options, max: 1 });

for (;;) {
  while (Atomics.load(state, 0) !== 1) Atomics.wait(state, 0, Atomics.load(state, 0));
  const sql = new TextDecoder().decode(bytes.slice(0, Atomics.load(state, 1)));
  const r = await pool.query(sql);
  const out = new TextEncoder().encode(JSON.stringify(r.rows));
  bytes.set(out);
  Atomics.store(state, 1, out.length);
  Atomics.store(state, 0, 2);
  Atomics.notify(state, 0);
}
