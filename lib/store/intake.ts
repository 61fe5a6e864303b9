/**
 * The journal intake: an append-only log of exec records that a session Worker writes with one
 * `write` per line before the exec's result is delivered. It is what makes a delivered result
 * survive a kernel crash without a SQLite commit per exec (a commit costs 100–300 µs here; a
 * line ~10 µs). The journal thread folds the lines into SQLite in batches
 * (`intake_apply.ts`), recording how far it got in the same transaction, and a kernel that
 * restarts after a crash folds in whatever its predecessor left.
 *
 * Files: `<state>/intake/<writer token>.<worker n>.<segment>.log`, one writer each (so appends
 * never interleave). A segment ends with an `e` line; the journal thread deletes it once folded.
 *
 * @module
 */

import { join } from "node:path";
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

/** An exec finished: its outcome, statement rows and undo inverses. */
export interface IntakeFinish {
  t: "f";
  k: number;
  result: FinishRequestInput;
  statements: StatementInput[];
  undo: IntakeUndo[];
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

/**
 * The writing side, owned by one session Worker. `append` returns once the line is in the
 * file (the page cache: it survives the process, like a SQLite WAL commit with
 * `synchronous=NORMAL`); it throws when the write fails, so the caller can report it.
 */
export class IntakeWriter {
  readonly dir: string;
  readonly token: string;
  readonly worker: number;
  #segment = 0;
  #file: Deno.FsFile | null = null;
  #size = 0;
  #next = 1;

  /** `token` is the kernel's writer token; `worker` numbers the session workers it started. */
  constructor(dir: string, token: string, worker: number) {
    if (!/^[A-Za-z0-9-]+$/.test(token)) throw new Error(`invalid intake token ${token}`);
    this.dir = dir;
    this.token = token;
    this.worker = worker;
  }

  /** A fresh exec key (pairs a begin line with its finish line). */
  nextKey(): number {
    return this.#next++;
  }

  #open(): Deno.FsFile {
    if (this.#file) return this.#file;
    Deno.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, intakeName(this.token, this.worker, this.#segment));
    this.#file = Deno.openSync(path, { append: true, create: true, mode: 0o600 });
    this.#size = this.#file.statSync().size;
    return this.#file;
  }

  #write(line: IntakeLine): void {
    const bytes = enc.encode(JSON.stringify(line) + "\n");
    const f = this.#open();
    for (let off = 0; off < bytes.length;) {
      const n = f.writeSync(bytes.subarray(off));
      if (n <= 0) throw new Error("the intake file accepted no bytes");
      off += n;
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
    this.#file?.close();
    this.#file = null;
    this.#segment++;
  }

  /** Close the current segment for good (the worker is going away). */
  close(): void {
    if (!this.#file) return;
    try {
      this.#endSegment();
    } catch {
      this.#file?.close();
      this.#file = null;
    }
  }
}
