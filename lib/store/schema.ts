/**
 * The journal's SQLite schema as an ordered list of migrations.
 *
 * `PRAGMA user_version` is the authoritative version; `schema_migration` logs
 * when each step ran. Each migration runs in its own `BEGIN IMMEDIATE`
 * transaction that re-reads the version first, so two processes opening the
 * same file at once cannot both apply a step. A file newer than this code is
 * refused (`schema_too_new`) rather than written to.
 *
 * Migrations are frozen once shipped: a later change is a new entry, never an
 * edit of an old one.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { StoreError } from "./errors.ts";

/** One schema step. */
export interface Migration {
  /** Version the database has after this step. */
  version: number;
  /** Short description (logged in `schema_migration`). */
  name: string;
  /** SQL to run (inside the migration's transaction). */
  sql: string;
}

/** Every migration, in order. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "journal, blob refs, pins, undo records, durable events",
    sql: `
      CREATE TABLE journal (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: events point at ids
        parent_id     INTEGER REFERENCES journal(id) ON DELETE CASCADE,
        kind          TEXT NOT NULL CHECK (kind IN ('request', 'statement')),
        ordinal       INTEGER,
        session       TEXT NOT NULL,
        principal     TEXT NOT NULL,
        writer        TEXT,            -- token of the process that began the row (crash sweep)
        started_at    INTEGER NOT NULL, -- ms since the epoch
        duration_ns   INTEGER,
        cwd           TEXT NOT NULL,
        env_hash      TEXT,
        source        TEXT NOT NULL,
        head          TEXT NOT NULL,    -- first whitespace-separated word of source
        ast           TEXT,             -- JSON
        effects       TEXT NOT NULL DEFAULT '[]',  -- JSON array of {kind, ...}
        status        TEXT NOT NULL
                      CHECK (status IN ('running', 'ok', 'error', 'cancelled', 'unfinished')),
        ok            INTEGER CHECK (ok IN (0, 1)),
        exit_status   INTEGER,
        signal        TEXT,
        outputs       TEXT NOT NULL DEFAULT '[]',  -- JSON array of OutputRecord
        error_code    TEXT,
        error_message TEXT,
        CHECK ((kind = 'request') = (parent_id IS NULL))
      ) STRICT;
      CREATE INDEX journal_started   ON journal(started_at);
      CREATE INDEX journal_parent    ON journal(parent_id, ordinal);
      CREATE INDEX journal_principal ON journal(principal, id);
      CREATE INDEX journal_session   ON journal(session, id);
      CREATE INDEX journal_head      ON journal(head, id);
      CREATE INDEX journal_running   ON journal(writer) WHERE status = 'running';

      CREATE TABLE blob_ref (
        journal_id INTEGER NOT NULL REFERENCES journal(id) ON DELETE CASCADE,
        hash       TEXT NOT NULL,
        role       TEXT NOT NULL,   -- output kind, or 'undo'
        PRIMARY KEY (journal_id, hash, role)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX blob_ref_hash ON blob_ref(hash);

      CREATE TABLE pin (
        hash       TEXT NOT NULL,
        owner      TEXT NOT NULL,
        reason     TEXT NOT NULL DEFAULT '',
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        PRIMARY KEY (hash, owner)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX pin_owner ON pin(owner);

      CREATE TABLE undo_record (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        journal_id   INTEGER NOT NULL REFERENCES journal(id) ON DELETE CASCADE,
        kind         TEXT NOT NULL CHECK (kind IN ('trash_move', 'restore_bytes', 'move_back')),
        data         TEXT NOT NULL,  -- JSON
        precondition TEXT NOT NULL,  -- JSON array of UndoCheck
        created_at   INTEGER NOT NULL,
        applied_at   INTEGER
      ) STRICT;
      CREATE INDEX undo_journal ON undo_record(journal_id);

      CREATE TABLE event (
        channel TEXT NOT NULL,
        scope   TEXT NOT NULL DEFAULT '',  -- session name; '' = kernel-wide (D-21)
        seq     INTEGER NOT NULL,          -- dense from 0 per (channel, scope)
        ts      INTEGER NOT NULL,          -- ms since the epoch
        payload TEXT NOT NULL,             -- JSON
        PRIMARY KEY (channel, scope, seq)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX event_ts ON event(ts);
      -- next sequence number per stream; survives deletion of old events
      CREATE TABLE event_channel (
        channel  TEXT NOT NULL,
        scope    TEXT NOT NULL DEFAULT '',
        next_seq INTEGER NOT NULL,
        PRIMARY KEY (channel, scope)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    // v1 matched effect kinds with json_each over journal.effects at query time
    // (exact, but a full scan). v2 keeps one indexed row per (kind, entry) and
    // backfills it from the JSON of existing rows.
    version: 2,
    name: "indexed effect kinds (journal_effect), backfilled",
    sql: `
      CREATE TABLE journal_effect (
        kind       TEXT NOT NULL,
        journal_id INTEGER NOT NULL REFERENCES journal(id) ON DELETE CASCADE,
        PRIMARY KEY (kind, journal_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX journal_effect_entry ON journal_effect(journal_id);
      INSERT OR IGNORE INTO journal_effect (kind, journal_id)
        SELECT replace(json_extract(e.value, '$.kind'), '.', '_'), j.id
        FROM journal AS j, json_each(j.effects) AS e
        WHERE json_valid(j.effects) AND json_type(e.value, '$.kind') = 'text';
    `,
  },
  {
    // The journal intake (intake.ts): how far each intake file has been folded into the
    // journal, and the row ids of its begun-but-unfinished execs, written in the same
    // transaction as the folded rows so every line is applied exactly once.
    version: 3,
    name: "journal intake marks",
    sql: `
      CREATE TABLE intake_mark (
        file    TEXT PRIMARY KEY,
        offset  INTEGER NOT NULL,
        pending TEXT NOT NULL DEFAULT '{}'  -- JSON {exec key: journal id}
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    // Every filtered query is over request rows and statements are read by parent, yet v1
    // indexed statement rows in all five lookup indexes; each exec stores a request and at
    // least one statement, so that was most of the journal's index writes. v4 makes them
    // partial: statement rows enter only journal_parent, request rows skip it. Queries name
    // `kind = 'request'` literally (a bound parameter cannot select a partial index).
    version: 4,
    name: "partial journal indexes: request filters over requests, parent over statements",
    sql: `
      DROP INDEX journal_started;
      DROP INDEX journal_principal;
      DROP INDEX journal_session;
      DROP INDEX journal_head;
      DROP INDEX journal_parent;
      CREATE INDEX journal_started   ON journal(started_at) WHERE kind = 'request';
      CREATE INDEX journal_principal ON journal(principal, id) WHERE kind = 'request';
      CREATE INDEX journal_session   ON journal(session, id) WHERE kind = 'request';
      CREATE INDEX journal_head      ON journal(head, id) WHERE kind = 'request';
      CREATE INDEX journal_parent    ON journal(parent_id, ordinal) WHERE parent_id IS NOT NULL;
    `,
  },
];

/** The version this code writes. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1].version;

/** Read `PRAGMA user_version`. */
export function schemaVersion(db: DatabaseSync): number {
  const row = db.prepare("PRAGMA user_version").get() as { user_version: number };
  return row.user_version;
}

/**
 * Bring `db` up to `target` (default: the latest version), one transaction per
 * step. Returns the versions applied.
 * @throws {StoreError} `schema_too_new` when the file is newer than this code.
 */
export function migrate(db: DatabaseSync, target: number = SCHEMA_VERSION): number[] {
  const applied: number[] = [];
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migration (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
  for (;;) {
    db.exec("BEGIN IMMEDIATE");
    try {
      const current = schemaVersion(db);
      if (current > SCHEMA_VERSION) {
        throw new StoreError(
          "schema_too_new",
          `journal schema version ${current} is newer than this Shoal understands (${SCHEMA_VERSION}); upgrade Shoal or use another state directory`,
          { version: current, supported: SCHEMA_VERSION },
        );
      }
      const next = MIGRATIONS.find((m) => m.version === current + 1);
      if (current >= target || !next) {
        db.exec("COMMIT");
        return applied;
      }
      db.exec(next.sql);
      db.prepare("INSERT INTO schema_migration (version, name, applied_at) VALUES (?, ?, ?)")
        .run(next.version, next.name, Date.now());
      // PRAGMA cannot take parameters; the value is a trusted integer.
      db.exec(`PRAGMA user_version = ${next.version}`);
      db.exec("COMMIT");
      applied.push(next.version);
    } catch (e) {
      if (db.isTransaction) db.exec("ROLLBACK");
      throw e;
    }
  }
}
