/**
 * Folding the journal intake (`intake.ts`) into SQLite, on the journal's own thread. One
 * catch-up reads every new complete line of this writer's intake files, applies them in one
 * transaction (each line in its own savepoint, so a bad line costs only itself) and records in
 * the same transaction how far each file was folded (`intake_mark`), so a line is applied
 * exactly once even across crashes. Files of dead writers (a kernel that crashed) are folded
 * at open; their begun-but-unfinished execs become `unfinished` rows.
 *
 * @module
 */

import { join } from "node:path";
import { StoreError } from "./errors.ts";
import { headOf } from "./validate.ts";
import * as events from "./event_rows.ts";
import * as journal from "./journal_rows.ts";
import * as undo from "./undo_rows.ts";
import type { Conn } from "./sqlite_conn.ts";
import { fromSqlite, sqliteCode } from "./sqlite_errors.ts";
import { type IntakeLine, parseIntakeName } from "./intake.ts";
import { intakeExtent, uncommittedTail } from "./intake_map.ts";
import type { UndoInput } from "./types.ts";

/** A request row the fold finished, and its `journal` channel event, stored with it. */
export interface IntakeNotice {
  id: number;
  session: string;
  principal: string;
  head: string;
  ok: boolean;
  /** The event's number in the session's `journal` stream. */
  seq: number;
  /** The event's time (ms since the epoch). */
  ts: number;
}

/** The `journal` channel payload of a finished exec's row. */
export function journalEventPayload(
  n: Pick<IntakeNotice, "id" | "head" | "ok" | "principal" | "session">,
): Record<string, unknown> {
  return { entry_id: n.id, head: n.head, ok: n.ok, principal: n.principal, session: n.session };
}

/** A problem met while folding (a corrupt line, a row the journal could not take). */
export interface IntakeProblem {
  /** A store error code (`journal_full`, `journal_write_failed`, …). */
  code: string;
  message: string;
  /** This process's session workers whose execs it concerns (empty: none known). */
  workers: number[];
}

/** What catch-ups found since the last `take()`. */
export interface IntakeReport {
  finished: IntakeNotice[];
  /** Reported, never hidden. */
  errors: IntakeProblem[];
  /**
   * True when the journal could not take a line for now (full, busy, an I/O error): it and the
   * lines after it stay in the intake, to be folded by a later catch-up (retry).
   */
  behind?: boolean;
  /**
   * The kernel's own `journal` channel events handed to this take, numbered after every
   * finished row above (so the stream is delivered in order); `seq` null when not even numbered.
   */
  events?: RecordedEvent[];
}

/** A kernel event `intakeTake` numbered and stored (or could not). */
export interface RecordedEvent {
  scope: string;
  seq: number | null;
  /** ms since the epoch. */
  ts: number;
  payload: Record<string, unknown>;
  /** Why it is not stored (it is still to be delivered, under `seq`). */
  error: { code: string; message: string } | null;
}

/** Lines folded per catch-up at most (bounds one transaction; the rest waits for the next). */
const MAX_LINES = 4096;
/** Bytes read per file per catch-up at most. */
const MAX_READ = 4 * 1024 * 1024;
/** Reports kept for `take()` (a kernel that never asks cannot grow memory). */
const MAX_REPORTED = 10_000;

interface FileState {
  offset: number;
  /** exec key → row id of begun, not yet finished execs. */
  pending: Record<string, number>;
  ended: boolean;
}

const dec = new TextDecoder();

/** A fold could not start its transaction (busy, or misuse): nothing was applied or lost. */
class BeginFailed extends Error {}

/**
 * SQLite results that say "not now" (full, busy, locked, read-only, I/O, cannot open), not
 * "never": a line that meets one stays in the intake until the journal can take it.
 */
const TRANSIENT = new Set([5, 6, 8, 10, 13, 14]);

/** True when `e` is a failure a later fold may not meet (see {@link TRANSIENT}). */
export function transientFailure(e: unknown): boolean {
  const c = sqliteCode(e) ?? sqliteCode((e as { cause?: unknown })?.cause);
  if (c !== null) return TRANSIENT.has(c);
  return e instanceof StoreError && (e.code === "journal_full" || e.code === "journal_busy");
}

/** A line the journal can never take: kept aside, with why, instead of being dropped. */
export const REJECTED_FILE = "rejected.log";

/** The quarantine could not take a line either (no space): the line stays in the intake. */
class QuarantineFailed extends Error {}

/** The journal thread's side of the intake of one writer token. */
export class IntakeFolder {
  readonly dir: string;
  readonly token: string;
  readonly #c: Conn;
  readonly #writer: string | null;
  readonly #files = new Map<string, FileState>();
  #report: IntakeReport = { finished: [], errors: [] };

  constructor(c: Conn, dir: string, token: string, writer: string | null) {
    this.#c = c;
    this.dir = dir;
    this.token = token;
    this.#writer = writer;
  }

  /** Reports gathered since the last call. */
  take(): IntakeReport {
    const r = this.#report;
    this.#report = { finished: [], errors: [] };
    return r;
  }

  #error(message: string, code = "journal_write_failed", files: string[] = []): void {
    if (this.#report.errors.length >= MAX_REPORTED) return;
    const workers = new Set<number>();
    for (const f of files) {
      const p = parseIntakeName(f);
      if (p && p.token === this.token) workers.add(p.worker);
    }
    this.#report.errors.push({ code, message, workers: [...workers] });
  }

  #state(name: string): FileState {
    let s = this.#files.get(name);
    if (!s) {
      const row = this.#c.stmt("SELECT offset, pending FROM intake_mark WHERE file = ?").get(
        name,
      ) as { offset: number; pending: string } | undefined;
      s = {
        offset: row?.offset ?? 0,
        pending: row ? JSON.parse(row.pending) : {},
        ended: false,
      };
      this.#files.set(name, s);
    }
    return s;
  }

  /** Intake files sorted by token, worker, segment: this token's, or (`dead`) dead writers'. */
  #list(dead?: (token: string) => boolean): string[] {
    let names: string[];
    try {
      names = [...Deno.readDirSync(this.dir)].filter((e) => e.isFile).map((e) => e.name);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      throw new StoreError(
        "io_error",
        `the journal intake ${this.dir} cannot be read (${(e as Error).message}); it must be ` +
          `a directory the kernel can read and write`,
      );
    }
    const parsed = names.map((n) => ({ n, p: parseIntakeName(n) }))
      .filter((x) =>
        x.p !== null &&
        (dead ? x.p.token !== this.token && dead(x.p.token) : x.p.token === this.token)
      );
    parsed.sort((a, b) =>
      a.p!.token < b.p!.token ? -1 : a.p!.token > b.p!.token ? 1 : a.p!.worker - b.p!.worker ||
        a.p!.segment - b.p!.segment
    );
    return parsed.map((x) => x.n);
  }

  /** Complete new lines of one file (bounded), advancing nothing yet. */
  #read(
    name: string,
    s: FileState,
  ): { lines: string[]; from: number; end: number; partial: boolean } {
    let f: Deno.FsFile;
    try {
      f = Deno.openSync(join(this.dir, name), { read: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        return { lines: [], from: s.offset, end: s.offset, partial: false };
      }
      throw e;
    }
    try {
      // A mapped segment's lines start past its header and end at its committed end.
      const x = intakeExtent(f);
      if (s.offset < x.start) s.offset = x.start;
      const size = x.end;
      const from = s.offset;
      if (size <= from) return { lines: [], from, end: from, partial: false };
      const want = Math.min(size - s.offset, MAX_READ);
      const buf = new Uint8Array(want);
      f.seekSync(s.offset, Deno.SeekMode.Start);
      let got = 0;
      while (got < want) {
        const n = f.readSync(buf.subarray(got));
        if (n === null || n === 0) break;
        got += n;
      }
      const partial = s.offset + got < size;
      const last = buf.subarray(0, got).lastIndexOf(10);
      if (last < 0) return { lines: [], from, end: from, partial };
      const text = dec.decode(buf.subarray(0, last));
      return { lines: text.split("\n"), from, end: from + last + 1, partial };
    } finally {
      f.close();
    }
  }

  /**
   * Fold new lines of this writer's files, or, given `isDead`, the files of other writers it
   * declares dead (at open). Returns how many lines were folded.
   */
  catchUp(isDead?: (token: string) => boolean): number {
    const dead = isDead !== undefined;
    const names = this.#list(isDead);
    if (names.length === 0) return 0;
    const reads: Array<
      { name: string; s: FileState; lines: string[]; from: number; end: number; partial: boolean }
    > = [];
    let total = 0;
    for (const name of names) {
      if (total >= MAX_LINES) break;
      const s = this.#state(name);
      const r = this.#read(name, s);
      if (r.lines.length > MAX_LINES - total) {
        // Keep the transaction bounded: fold only a prefix, the rest next time.
        const keep = r.lines.slice(0, MAX_LINES - total);
        const bytes = keep.reduce((a, l) => a + new TextEncoder().encode(l).length + 1, 0);
        reads.push({ name, s, lines: keep, from: r.from, end: r.from + bytes, partial: true });
        total = MAX_LINES;
        break;
      }
      if (r.lines.length > 0 || dead) reads.push({ name, s, ...r });
      total += r.lines.length;
    }
    if (reads.length === 0) return 0;
    const finished: IntakeNotice[] = [];
    const done: string[] = [];
    const reported = this.#report.errors.length;
    const attempt = (guarded: boolean) => {
      finished.length = 0;
      done.length = 0;
      this.#c.unguarded = !guarded;
      try {
        this.#inTx(() => {
          for (const r of reads) {
            const st = this.#foldLines(r.name, r.s, r.lines, finished);
            if (this.#closeOut(r.name, st, dead && !r.partial, r.end)) done.push(r.name);
          }
        });
      } finally {
        this.#c.unguarded = false;
      }
    };
    try {
      try {
        // Fast: no savepoint per line. Any failure rolls it all back…
        attempt(false);
      } catch (e) {
        if (e instanceof BeginFailed) throw e;
        // …and the same lines go again, each in its own savepoint, so a line that fails
        // costs only itself (reported once: what the first attempt reported is dropped).
        this.#report.errors.length = Math.min(this.#report.errors.length, reported);
        for (const r of reads) this.#files.set(r.name, r.s);
        attempt(true);
      }
    } catch (e) {
      // Nothing advanced. Could not even begin (busy): the same lines are folded next time.
      for (const r of reads) this.#files.delete(r.name);
      if (e instanceof BeginFailed) {
        this.#error(`folding the journal intake: ${e.message}`);
        return 0;
      }
      // Fold line by line instead: every line that fits is applied, a line the journal cannot
      // take now stays (with those after it) for a later fold, one it never can is set aside.
      // Nothing of the attempts stands: only what the slow path commits is reported.
      finished.length = 0;
      done.length = 0;
      return this.#foldOneByOne(reads, finished, done, dead);
    }
    this.#finishFold(finished, done, dead);
    return total;
  }

  /**
   * Run `fn` in its own write transaction (rolled back when it throws). Never nested in a
   * caller's transaction: the fold's bookkeeping trusts that its COMMIT is final.
   */
  #inTx(fn: () => void): void {
    const db = this.#c.db;
    if (db.isTransaction) {
      throw new BeginFailed("the intake is folded outside other transactions (internal error)");
    }
    try {
      db.exec("BEGIN IMMEDIATE");
    } catch (e) {
      throw new BeginFailed(fromSqlite(e, "starting an intake fold").message);
    }
    try {
      fn();
      db.exec("COMMIT");
    } catch (e) {
      if (db.isTransaction) {
        try {
          db.exec("ROLLBACK");
        } catch { /* gone */ }
      }
      throw e;
    }
  }

  /**
   * Apply lines inside the caller's transaction. A line that fails alone (its savepoint rolled
   * back) is reported and skipped; one that took the whole transaction down rethrows.
   */
  #foldLines(name: string, s: FileState, lines: string[], out: IntakeNotice[]): FileState {
    const st: FileState = { offset: s.offset, pending: { ...s.pending }, ended: s.ended };
    for (const text of lines) {
      if (text === "") continue;
      let line: IntakeLine;
      try {
        line = JSON.parse(text);
      } catch {
        this.#reject(name, text, "not JSON (a corrupt line)");
        this.#error(
          `journal intake ${name}: a corrupt line after byte ${s.offset} was set aside in ` +
            REJECTED_FILE,
        );
        continue;
      }
      try {
        // One line, one savepoint: an exec's begin and finish are stored together or not.
        this.#c.tx("intake line", () => this.#apply(line, st.pending, out));
        if (line.t === "e") st.ended = true;
      } catch (e) {
        // Unguarded, nothing undoes this line alone: the caller redoes the batch guarded. A
        // journal that cannot take it now (full, busy, I/O) keeps it for a later fold.
        if (!this.#c.db.isTransaction || this.#c.unguarded || transientFailure(e)) throw e;
        // It can never be taken: it is set aside (never dropped), and reported.
        const err = fromSqlite(e, "intake");
        this.#reject(name, text, err.message);
        this.#error(
          `journal intake ${name}: ${err.message} (the line was set aside in ${REJECTED_FILE})`,
          err.code,
          [name],
        );
      }
    }
    return st;
  }

  /**
   * Keep a line the journal can never take in `<intake>/rejected.log` (0600), with where it came
   * from and why, so it is not lost. Written before the fold commits: a fold that is rolled back
   * and redone may keep a line twice, never zero times. Throws {@link QuarantineFailed} when it
   * cannot be written (then the line stays in the intake).
   */
  #reject(name: string, text: string, reason: string): void {
    const entry = JSON.stringify({ file: name, at: Date.now(), reason, line: text }) + "\n";
    try {
      Deno.writeTextFileSync(join(this.dir, REJECTED_FILE), entry, {
        append: true,
        create: true,
        mode: 0o600,
      });
    } catch (e) {
      throw new QuarantineFailed(`setting a line aside failed: ${(e as Error).message}`);
    }
  }

  /** Write the file's mark (and end a finished file's pending execs); true when it is over. */
  #closeOut(name: string, st: FileState, dead: boolean, end: number): boolean {
    // A dead writer's unfinished execs can never finish: say so in their rows.
    const over = dead || st.ended;
    if (over) {
      for (const id of Object.values(st.pending)) {
        this.#c.stmt(
          "UPDATE journal SET status = 'unfinished' WHERE id = ? AND status = 'running'",
        ).run(id);
      }
      st.pending = {};
    }
    this.#c.stmt(
      `INSERT INTO intake_mark (file, offset, pending) VALUES (?, ?, ?)
       ON CONFLICT(file) DO UPDATE SET offset = excluded.offset, pending = excluded.pending`,
    ).run(name, end, JSON.stringify(st.pending));
    st.offset = end;
    this.#files.set(name, st);
    return over;
  }

  /** The slow path: every line in its own transaction; a line that fails is passed over. */
  #foldOneByOne(
    reads: Array<{ name: string; lines: string[]; from: number; end: number; partial: boolean }>,
    finished: IntakeNotice[],
    done: string[],
    dead: boolean,
  ): number {
    let folded = 0;
    for (const r of reads) {
      let s = this.#state(r.name);
      // A mapped segment's lines start past its header (its mark may still say 0).
      if (s.offset < r.from) s.offset = r.from;
      const enc = new TextEncoder();
      for (let i = 0; i < r.lines.length; i++) {
        const end = s.offset + enc.encode(r.lines[i]).length + 1;
        const last = i === r.lines.length - 1;
        const got: IntakeNotice[] = [];
        try {
          this.#inTx(() => {
            const st = this.#foldLines(r.name, s, [r.lines[i]], got);
            this.#closeOut(r.name, st, last && dead && !r.partial, end);
          });
        } catch (e) {
          this.#files.delete(r.name);
          if (!(e instanceof BeginFailed)) {
            // Not now (the journal is full, busy, failing; or the line could not even be set
            // aside): the line stays in the intake, with every line after it, in order.
            this.#report.behind = true;
            const why = e instanceof QuarantineFailed
              ? e.message
              : fromSqlite(e, "the journal cannot take it now").message;
            this.#error(
              `journal intake ${r.name}: a line waits in the intake until the journal can ` +
                `take it (${why})`,
              e instanceof QuarantineFailed ? "journal_write_failed" : fromSqlite(e, "").code,
              [r.name],
            );
          }
          this.#finishFold(finished, done, dead);
          return folded; // fold it (and the rest) next time
        }
        finished.push(...got);
        s = this.#files.get(r.name)!;
        folded++;
      }
      if (s.ended || (dead && !r.partial)) done.push(r.name);
    }
    this.#finishFold(finished, done, dead);
    return folded;
  }

  /** After a commit: report what finished, remove files that are over. */
  #finishFold(
    finished: IntakeNotice[],
    done: string[],
    dead: boolean,
  ): void {
    for (const n of finished) {
      if (this.#report.finished.length < MAX_REPORTED) this.#report.finished.push(n);
    }
    // A folded, ended file goes; its mark row is dropped once the file is gone (never before:
    // a crash between the two must not refold the file from byte 0).
    for (const name of done) {
      const s = this.#files.get(name)!;
      try {
        const tail = this.#tail(name, s.offset);
        if (tail !== 0) {
          // More bytes than complete lines: a live file grows on; a dead writer's is torn.
          if (!dead) continue;
          this.#error(
            `journal intake ${name}: a torn last line (${
              tail > 0 ? `${tail} bytes` : "never committed"
            }) of a writer that died mid-write was dropped`,
          );
        }
        Deno.removeSync(join(this.dir, name));
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) {
          this.#error(`removing the folded intake ${name}: ${(e as Error).message}`);
          continue;
        }
      }
      this.#files.delete(name);
      this.#forget(name);
    }
  }

  /**
   * What a file holds past `offset` that is not a complete line: its byte count, -1 for a
   * mapped segment's uncommitted line (its length is unknown), 0 for nothing.
   */
  #tail(name: string, offset: number): number {
    const f = Deno.openSync(join(this.dir, name), { read: true });
    try {
      const x = intakeExtent(f);
      if (x.end > offset) return x.end - offset;
      return uncommittedTail(f, x) ? -1 : 0;
    } finally {
      f.close();
    }
  }

  #forget(name: string): void {
    try {
      this.#c.tx(
        "intake mark",
        () => this.#c.stmt("DELETE FROM intake_mark WHERE file = ?").run(name),
      );
    } catch (e) {
      this.#error(`dropping the intake mark of ${name}: ${(e as Error).message}`);
    }
  }

  /** Drop marks whose files are gone (a crash between removing a file and its mark). */
  sweepMarks(): void {
    const rows = this.#c.stmt("SELECT file FROM intake_mark").all() as Array<{ file: string }>;
    for (const { file } of rows) {
      try {
        Deno.statSync(join(this.dir, file));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) this.#forget(file);
      }
    }
  }

  /**
   * Fold everything a dead session worker (`worker` of this token; all of them when omitted, at
   * close) wrote and end its files: an exec it began but never finished becomes `unfinished`.
   */
  abandon(worker?: number): void {
    while (this.catchUp() >= MAX_LINES) { /* bounded batches until none is left */ }
    for (const name of this.#list()) {
      const p = parseIntakeName(name)!;
      if (worker !== undefined && p.worker !== worker) continue;
      const s = this.#state(name);
      // Lines the journal could not take yet stay, file and all: a later fold (or the next
      // kernel's open, which folds a dead writer's intake) applies them.
      let unfolded = 0;
      try {
        unfolded = this.#tail(name, s.offset);
      } catch { /* gone */ }
      if (unfolded > 0) {
        this.#report.behind = true;
        continue;
      }
      const ids = Object.values(s.pending);
      try {
        this.#c.tx("intake abandon", () => {
          for (const id of ids) {
            this.#c.stmt(
              "UPDATE journal SET status = 'unfinished' WHERE id = ? AND status = 'running'",
            ).run(id);
          }
          s.pending = {};
          this.#c.stmt("UPDATE intake_mark SET pending = '{}' WHERE file = ?").run(name);
        });
        Deno.removeSync(join(this.dir, name));
        this.#files.delete(name);
        this.#forget(name);
      } catch (e) {
        this.#error(`closing the intake of a dead session worker: ${(e as Error).message}`);
      }
    }
  }

  #apply(line: IntakeLine, pending: Record<string, number>, out: IntakeNotice[]): void {
    if (line.t === "e") return;
    if (line.t === "b") {
      pending[String(line.k)] = journal.beginRequest(this.#c, this.#writer, line.row);
      return;
    }
    let id: number;
    if (line.t === "x") {
      const body = (line.row.ast as { body?: unknown[] } | null | undefined)?.body;
      const statements = line.stmtAst === "body" && Array.isArray(body)
        ? line.statements.map((st, i) => ({ ...st, ast: body[i] }))
        : line.statements;
      id = journal.recordRequest(this.#c, this.#writer, line.row, line.result, statements);
    } else if (line.t === "f") {
      const begun = pending[String(line.k)];
      if (begun === undefined) {
        throw new Error(`finish of exec ${line.k} without its begin; skipped`);
      }
      id = begun;
      journal.finishRequest(this.#c, id, line.result, line.statements);
      delete pending[String(line.k)];
    } else {
      throw new Error(`unknown intake line type ${JSON.stringify((line as { t: unknown }).t)}`);
    }
    for (const u of line.undo) {
      try {
        undo.recordUndo(this.#c, { ...u, journalId: id } as UndoInput);
      } catch (e) {
        if (this.#c.unguarded) throw e;
        this.#error(
          `recording an undo inverse of entry ${id} failed: ${(e as Error).message}`,
        );
      }
    }
    const row = line.t === "x"
      ? line.row
      : this.#c.stmt("SELECT session, principal, source FROM journal WHERE id = ?")
        .get(id) as { session: string; principal: string; source: string };
    if (line.ev) {
      // The exec's transcript event, in the same transaction as its row: one is durable iff
      // the other is. A refused event is reported; its exec's row stays.
      const refused = events.storeNumbered(this.#c, { ...line.ev, scope: row.session });
      if (refused) {
        this.#error(`the transcript event of entry ${id}: ${refused.message}`, refused.code);
      }
    }
    const done = {
      id,
      session: row.session,
      principal: row.principal,
      head: headOf(row.source),
      ok: line.result.ok ?? line.result.status === "ok",
    };
    // Its `journal` channel event, numbered here and stored with the row: one is durable iff
    // the other is (D-20); the kernel delivers it live after the commit.
    const ev = events.appendEvent(this.#c, {
      channel: "journal",
      scope: row.session,
      payload: journalEventPayload(done),
    });
    out.push({ ...done, seq: ev.seq, ts: ev.ts });
  }
}
