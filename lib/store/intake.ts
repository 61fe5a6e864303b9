/**
 * The journal intake: an append-only log of exec records that a session Worker writes, a line
 * per record, before the exec's result is delivered. It is what makes a delivered result
 * survive a kernel crash without a SQLite commit per exec (a commit costs 100–300 µs here; a
 * line a few µs). The journal thread folds the lines into SQLite in batches
 * (`intake_apply.ts`), recording how far it got in the same transaction, and a kernel that
 * restarts after a crash folds in whatever its predecessor left.
 *
 * Files: `<state>/intake/<writer token>.<worker n>.<segment>.log`, one writer each (so appends
 * never interleave). A segment ends with an `e` line; the journal thread deletes it once folded.
 * Segments are memory-mapped where the host allows (`intake_map.ts`: the line is copied into
 * the page cache, no `write` per line) and plain files written with `write` otherwise.
 *
 * @module
 */

import { join } from "node:path";
import { MappedSegment } from "./intake_map.ts";
import type { BeginRequestInput, FinishRequestInput, StatementInput } from "./types.ts";

/** A segment is closed and a new one started past this size. */
export const INTAKE_SEGMENT_BYTES = 8 * 1024 * 1024;

/** An undo inverse as the intake carries it (its `journalId` is filled in when folded). */
export interface IntakeUndo {
  kind: string;
  data: unknown;
  precondition: unknown[];
}

/** An exec began (the running row). `k` numbers the execs of one intake file series. */
export interface IntakeBegin {
  t: "b";
  k: number;
  row: BeginRequestInput;
}

/** An event logged with its exec, numbered by the session worker (`session.transcript`). */
export interface IntakeEvent {
  channel: string;
  seq: number;
  /** ms since the epoch. */
  ts: number;
  payload: unknown;
}

/** An exec finished: its outcome, statement rows and undo inverses. */
export interface IntakeFinish {
  t: "f";
  k: number;
  result: FinishRequestInput;
  statements: StatementInput[];
  undo: IntakeUndo[];
  /** Its transcript event, stored with its row (scope: the row's session). */
  ev?: IntakeEvent;
}

/** An exec that began and finished with nothing in between worth a line of its own. */
export interface IntakeWhole extends Omit<IntakeFinish, "t"> {
  t: "x";
  row: BeginRequestInput;
  /** `"body"`: statement i's AST is `row.ast.body[i]` (written once, not twice). */
  stmtAst?: "body";
}

/** The segment is closed: nothing more will be appended to it. */
export interface IntakeEnd {
  t: "e";
}

/** One intake line. */
export type IntakeLine = IntakeBegin | IntakeFinish | IntakeWhole | IntakeEnd;

/** What a file name says: whose it is, which worker, which segment. */
export interface IntakeName {
  token: string;
  worker: number;
  segment: number;
}

const NAME_RE = /^([A-Za-z0-9-]+)\.([0-9]+)\.([0-9]+)\.log$/;

/** Parse an intake file name (null for anything else in the directory). */
export function parseIntakeName(name: string): IntakeName | null {
  const m = NAME_RE.exec(name);
  if (!m) return null;
  return { token: m[1], worker: Number(m[2]), segment: Number(m[3]) };
}

/** The file name of one segment. */
export function intakeName(token: string, worker: number, segment: number): string {
  return `${token}.${worker}.${segment}.log`;
}

const enc = new TextEncoder();

/** A mapped segment starts this big and doubles when a line does not fit. */
const MAPPED_INITIAL_BYTES = 1024 * 1024;

/**
 * The writing side, owned by one session Worker. `append` returns once the line is in the
 * file (the page cache: it survives the process, like a SQLite WAL commit with
 * `synchronous=NORMAL`); it throws when the write fails, so the caller can report it.
 * Segments are memory-mapped where the host allows it (`intake_map.ts`: a copy instead of a
 * `write` per line), and written with `write` otherwise; the reader takes either.
 */
export class IntakeWriter {
  readonly dir: string;
  readonly token: string;
  readonly worker: number;
  #segment = 0;
  #mapped: MappedSegment | null = null;
  #file: Deno.FsFile | null = null;
  #size = 0;
  #next = 1;
  readonly #map: boolean;

  /**
   * `token` is the kernel's writer token; `worker` numbers the session workers it started;
   * `map: false` writes every segment with `write` (as on a host without FFI).
   */
  constructor(dir: string, token: string, worker: number, opts: { map?: boolean } = {}) {
    if (!/^[A-Za-z0-9-]+$/.test(token)) throw new Error(`invalid intake token ${token}`);
    this.dir = dir;
    this.token = token;
    this.worker = worker;
    this.#map = opts.map ?? true;
  }

  /** A fresh exec key (pairs a begin line with its finish line). */
  nextKey(): number {
    return this.#next++;
  }

  /** Whether the current segment is memory-mapped (tests, diagnostics). */
  get mapped(): boolean {
    return this.#mapped !== null;
  }

  #open(): void {
    if (this.#mapped || this.#file) return;
    Deno.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, intakeName(this.token, this.worker, this.#segment));
    this.#mapped = this.#map ? MappedSegment.create(path, MAPPED_INITIAL_BYTES) : null;
    if (this.#mapped) return;
    this.#file = Deno.openSync(path, { append: true, create: true, mode: 0o600 });
    this.#size = this.#file.statSync().size;
  }

  #write(line: IntakeLine): void {
    const text = JSON.stringify(line) + "\n";
    this.#open();
    if (this.#mapped) {
      this.#mapped.append(text);
      this.#size = this.#mapped.end;
      return;
    }
    const bytes = enc.encode(text);
    const f = this.#file!;
    try {
      for (let off = 0; off < bytes.length;) {
        const n = f.writeSync(bytes.subarray(off));
        if (n <= 0) throw new Error("the intake file accepted no bytes");
        off += n;
      }
    } catch (e) {
      // A part of a line (the disk filled mid-write) must not prefix the next line, which
      // would make both unreadable: cut the file back to its last whole line.
      try {
        f.truncateSync(this.#size);
      } catch { /* nothing more can be done; the reader reports a torn line */ }
      throw e;
    }
    this.#size += bytes.length;
  }

  /** Append one exec line; past the size bound, a finished exec ends the segment. */
  append(line: IntakeBegin | IntakeFinish | IntakeWhole): void {
    this.#write(line);
    if (this.#size >= INTAKE_SEGMENT_BYTES && line.t !== "b") this.#endSegment();
  }

  #endSegment(): void {
    this.#write({ t: "e" });
    this.#release();
    this.#segment++;
  }

  #release(): void {
    this.#mapped?.close();
    this.#mapped = null;
    this.#file?.close();
    this.#file = null;
  }

  /** Close the current segment for good (the worker is going away). */
  close(): void {
    if (!this.#file && !this.#mapped) return;
    try {
      this.#endSegment();
    } catch {
      this.#release();
    }
  }
}
