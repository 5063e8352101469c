/**
 * Issue 34 item 4: `harness doctor`'s store row under `[store] url`, against the run's real cluster,
 * reached as an operator writes it: the url's unix-socket form (the cluster listens on no TCP address).
 * Doctor reads the schema version without migrating; it fails naming the database (host and database)
 * and the cause when the database cannot be reached, does not exist, or is of a newer schema.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonApp } from "../../../../src/shell/app/daemon-app.js";
import { runDoctor } from "../../../../src/shell/cli/commands/doctor.js";
import { storePgCheck } from "../../../../src/shell/cli/doctor/store-pg-check.js";
import { openPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { pgPoolConfigOf } from "../../../../src/shell/store/pg/pg-config.js";
import { PG_SCHEMA_VERSION } from "../../../../src/shell/store/pg/pg-schema.js";
import { createLog } from "../../../../src/shell/support/log.js";
import type { PgDatabase } from "../../../support/pg-cluster.js";
import { freshPgDatabase, storeOf } from "./pg-store.js";

const socketUrl = (db: PgDatabase, user = db.user, database = db.database) =>
  `postgresql://${user}@/${database}?host=${db.host}`;

let db: PgDatabase;
let admin: pg.Client;
const dirs: string[] = [];

beforeAll(async () => {
  db = await freshPgDatabase("pg_doctor");
  admin = new pg.Client({ host: db.host, port: 5432, user: db.user, database: db.database });
  await admin.connect();
});

afterAll(async () => {
  await admin.end();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe("doctor's store row on PostgreSQL", () => {
  it("a database with no harness schema yet warns that the daemon migrates it, and doctor leaves it so", async () => {
    const row = await storePgCheck(storeOf(socketUrl(db)));
    expect(row.status).toBe("warn");
    expect(row.detail).toMatch(
      new RegExp(
        `^postgresql ${db.host}/${db.database} \\(PostgreSQL [0-9.]+.*, ssl_mode disable\\): schema version none yet; the daemon migrates it to ${PG_SCHEMA_VERSION} at its start$`,
      ),
    );
    const tables = await admin.query("SELECT to_regclass('harness_schema') IS NULL AS absent");
    expect(tables.rows[0]).toEqual({ absent: true });
  });

  it("a database at this harness's schema passes; one at a newer schema fails, naming it", async () => {
    const store = storeOf(socketUrl(db));
    const opened = await openPgStore(pgPoolConfigOf(store));
    await opened.close();
    const row = await storePgCheck(store);
    expect(row).toMatchObject({ name: "store", status: "pass" });
    expect(row.detail).toMatch(new RegExp(`: schema version ${PG_SCHEMA_VERSION}$`));
    await admin.query("UPDATE harness_schema SET version = $1", [PG_SCHEMA_VERSION + 1]);
    try {
      const newer = await storePgCheck(store);
      expect(newer.status).toBe("fail");
      expect(newer.detail).toMatch(
        new RegExp(
          `^postgresql ${db.host}/${db.database} .*: schema version ${PG_SCHEMA_VERSION + 1} is newer than this harness knows \\(${PG_SCHEMA_VERSION}\\); upgrade harness$`,
        ),
      );
    } finally {
      await admin.query("UPDATE harness_schema SET version = $1", [PG_SCHEMA_VERSION]);
    }
  });

  it("a server that cannot be reached fails, naming the database and the cause", async () => {
    const nowhere = fs.mkdtempSync(path.join(os.tmpdir(), "pg-none-"));
    dirs.push(nowhere);
    const row = await storePgCheck(storeOf(`postgresql://harness@/journal?host=${nowhere}`));
    expect(row.status).toBe("fail");
    expect(row.detail).toBe(
      `postgresql ${nowhere}/journal: cannot use the database: connect ENOENT ${nowhere}/.s.PGSQL.5432`,
    );
  });

  it("a database that does not exist fails, naming it and the server's answer", async () => {
    const row = await storePgCheck(storeOf(socketUrl(db, db.user, "no_such_db")));
    expect(row.status).toBe("fail");
    expect(row.detail).toBe(
      `postgresql ${db.host}/no_such_db: cannot use the database: database "no_such_db" does not exist`,
    );
  });

  it("password_file's password is what the connection presents; a role that may not read the schema fails", async () => {
    // The run's cluster trusts every local login (initdb -A trust), so a wrong password cannot fail
    // here (pg-tls.test.ts's own cluster asks for one); this checks the file's password reaches the connection.
    const role = `harness_pw_${process.pid}`;
    await admin.query(`CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN PASSWORD 'right horse'`);
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "pg-pw-"));
    dirs.push(d);
    const file = path.join(d, "pg.password");
    fs.writeFileSync(file, "right horse\n", { mode: 0o600 });
    const store = storeOf(socketUrl(db, role), `password_file = ${JSON.stringify(file)}`);
    const config = pgPoolConfigOf(store);
    expect(config.password).toBe("right horse");
    const client = new pg.Client(config);
    await client.connect();
    try {
      expect((client as unknown as { password: string }).password).toBe("right horse");
      const who = await client.query<{ current_user: string }>("SELECT current_user");
      expect(who.rows[0]?.current_user).toBe(role);
    } finally {
      await client.end();
    }
    const denied = await storePgCheck(store);
    expect(denied.detail).toBe(
      `postgresql ${db.host}/${db.database}: cannot use the database: permission denied for table harness_schema`,
    );
    await admin.query(`GRANT SELECT ON harness_schema TO ${pg.escapeIdentifier(role)}`);
    expect((await storePgCheck(store)).status).toBe("pass");
  });
});

/** A directory with XDG variables inside it. */
function home(): { root: string; env: NodeJS.ProcessEnv } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "pg-doctor-"));
  dirs.push(root);
  const env = {
    HOME: path.join(root, "home"),
    XDG_CONFIG_HOME: path.join(root, "config"),
    XDG_STATE_HOME: path.join(root, "state"),
    XDG_RUNTIME_DIR: path.join(root, "run"),
  };
  return { root, env };
}

type Report = {
  checks: { name: string; status: string; detail: string; findings: { status: string; message: string }[] }[];
};

describe("harness doctor under [store] url", () => {
  it("shows the store row even when no daemon answers, and fails naming the database when it is away", async () => {
    const { root, env } = home();
    const config = path.join(root, "harness.toml");
    const away = path.join(root, "away");
    fs.mkdirSync(away);
    fs.writeFileSync(
      config,
      `[server]\nsocket = ${JSON.stringify(path.join(root, "none.sock"))}\n\n[store]\nurl = "postgresql://harness@/journal?host=${away}"\n`,
    );
    const out: string[] = [];
    const code = await runDoctor({ config, json: true }, { env, out: (l) => out.push(l), err: () => {} });
    expect(code).toBe(3);
    const report = JSON.parse(out.join("\n")) as {
      checks: { name: string; status: string; detail: string }[];
    };
    expect(report.checks.map((c) => [c.name, c.status])).toEqual([
      ["daemon", "fail"],
      ["store", "fail"],
      ["agents", "pass"],
    ]);
    expect(report.checks[1]?.detail).toBe(
      `postgresql ${away}/journal: cannot use the database: connect ENOENT ${away}/.s.PGSQL.5432`,
    );
  });

  it("with a daemon answering, one store row: the database from here, the daemon's last write a finding", async () => {
    const { root, env } = home();
    await (await openPgStore(pgPoolConfigOf(storeOf(socketUrl(db))))).close();
    const server = `[server]\nsocket = ${JSON.stringify(path.join(root, "d.sock"))}\nmetrics_listen = ""\n\n[agents]\nlisten = ""\n`;
    const daemonConfig = path.join(root, "daemon.toml");
    fs.writeFileSync(daemonConfig, server);
    const daemon = await DaemonApp.start({
      env,
      configPath: daemonConfig,
      log: createLog({ level: "silent" }),
    });
    try {
      const config = path.join(root, "harness.toml");
      fs.writeFileSync(config, `${server}\n[store]\nurl = ${JSON.stringify(socketUrl(db))}\n`);
      const out: string[] = [];
      const code = await runDoctor({ config, json: true }, { env, out: (l) => out.push(l), err: () => {} });
      const report = JSON.parse(out.join("\n")) as Report;
      const store = report.checks.filter((c) => c.name === "store");
      expect(store).toHaveLength(1);
      expect(store[0]).toMatchObject({ status: "pass" });
      expect(store[0]?.detail).toMatch(
        new RegExp(`^postgresql ${db.host}/${db.database} .*: schema version ${PG_SCHEMA_VERSION}$`),
      );
      expect(store[0]?.findings).toEqual([
        { status: "pass", message: expect.stringMatching(/^the daemon writes to .*harness\.db$/) },
      ]);
      expect(code).toBe(0);
    } finally {
      await daemon.close();
    }
  });
});
