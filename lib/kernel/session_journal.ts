/**
 * The journal inside a session Worker (issue 7): the evaluator's {@link JournalPort} (effects
 * and undo inverses the builtins report, the `journal`/`undo` heads), statement-by-statement
 * evaluation for per-statement rows, the exec's outputs (small ones inline as previews, larger
 * ones into the CAS, which this worker opens itself so blob I/O never touches the kernel's main
 * thread), and `val:blake3:` ref resolution in the language.
 *
 * @module
 */

import type { Program, Stmt } from "../syntax/ast.ts";
import { RPC, RpcError } from "../client/errors.ts";
import {
  acquireHasher,
  type Blake3Hasher,
  BLOB_READ_CAP,
  ContentStore,
  type Effect,
  type OutputRecord,
  PREVIEW_MAX_BYTES,
  type StatementInput,
  type UndoCheck,
} from "../store/mod.ts";
import { fail } from "../value/errors.ts";
import {
  BytesV,
  DateTimeV,
  type ErrorV,
  ListV,
  OutcomeV,
  RecordV,
  TableV,
  type Value,
} from "../value/types.ts";
import { decodeWire, encodeBounded } from "../value/wire.ts";
import { jsonToValue } from "../value/json.ts";
import { isPromise, type MaybePromise } from "../eval/maybe.ts";
import { type CaptureResult, type SpillFactory, tempFileSpill } from "../exec/mod.ts";
import type { Evaluator } from "../eval/mod.ts";
import { installHooks } from "../eval/evaluator.ts";
import type {
  EffectInfo,
  JournalPort,
  JournalQuery,
  UndoIntent as PortIntent,
} from "../eval/journal_port.ts";
import type { CasPort } from "./journal_ports.ts";
import type {
  ExecRecord,
  JournalInit,
  JReplyMsg,
  JReqMsg,
  UndoIntent,
} from "./journal_messages.ts";

/** Value blobs above this many bytes of wire JSON keep only the response's elided form. */
const VALUE_BLOB_MAX = 4 * 1024 * 1024;
/** Files up to this size are fingerprinted with a BLAKE3 hash, larger ones by size + mtime. */
const HASH_FINGERPRINT_MAX = 8 * 1024 * 1024;

const enc = new TextEncoder();
const utf8 = new TextDecoder();

/** The statement rows of one exec (its source encoded once, not once per statement). */
function statementRows(facts: StmtFacts[], source: string): StatementInput[] {
  if (facts.length === 0) return [];
  const bytes = enc.encode(source);
  return facts.map((f) => statementRow(f, source, bytes));
}

/** `SHOAL_CAPTURE_CAP_BYTES` (upstream's capture-cap knob), or null when unset/invalid. */
const CAPTURE_CAP = (() => {
  try {
    const v = Deno.env.get("SHOAL_CAPTURE_CAP_BYTES");
    const n = v === undefined ? NaN : Number(v);
    return Number.isSafeInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
})();
const strict = new TextDecoder("utf-8", { fatal: true });

/** One statement's journal facts, gathered while it runs. */
interface StmtFacts {
  stmt: Stmt;
  startedAt: number;
  t0: number;
  value: Value | undefined;
  error: ErrorV | null;
}

/** The worker-side journal of one session. */
export class SessionJournal implements JournalPort {
  readonly cas: CasPort;
  readonly #hasher: Blake3Hasher;
  readonly #post: (m: JReqMsg) => void;
  readonly #replies = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void }
  >();
  #nextRid = 1;
  #effects: Effect[] = [];
  #undo: Array<{ intent: PortIntent; precondition: UndoCheck[] }> = [];
  #warnings: string[] = [];
  /** Value outputs already in the CAS, by value (immutable, so the blob stays right). */
  readonly #valueOutputs = new WeakMap<object, OutputRecord>();
  /** Values whose wire form exceeds {@link VALUE_BLOB_MAX} (only their elided form is kept). */
  readonly #overBound = new WeakSet<object>();

  private constructor(cas: CasPort, hasher: Blake3Hasher, post: (m: JReqMsg) => void) {
    this.cas = cas;
    this.#hasher = hasher;
    this.#post = post;
  }

  /**
   * Open the shared CAS (or use `cas`: a confined session's, proxied by the kernel) and install
   * the `val:blake3:` resolver for this worker's evaluator.
   */
  static async open(
    init: JournalInit,
    post: (m: JReqMsg) => void,
    cas?: CasPort,
  ): Promise<SessionJournal> {
    const store = cas ?? await ContentStore.open(init.casDir);
    const j = new SessionJournal(store, await acquireHasher(), post);
    installHooks({ resolveCasRef: (_ev, ref, span) => j.resolveRef(ref, span) });
    return j;
  }

  // ---- JournalPort ---------------------------------------------------------------------------

  /** Called on every reported effect (the exec log writes its running row first). */
  onEffect: () => void = () => {};

  effect(e: EffectInfo): void {
    this.onEffect();
    if (this.#effects.length < 1000) this.#effects.push({ ...e });
  }

  undoable(u: PortIntent): void {
    if (this.#undo.length >= 64) return;
    try {
      // The state the inverse expects, taken right after the mutation (synchronously, so a
      // later statement's change is detected as staleness, not absorbed).
      const pre: UndoCheck[] = u.kind === "trash_move"
        ? [this.#fingerprint(u.trash), { path: u.original, expect: "absent" }]
        : u.kind === "move_back"
        ? [this.#fingerprint(u.from), { path: u.to, expect: "absent" }]
        : [this.#fingerprint(u.path)];
      this.#undo.push({ intent: u, precondition: pre });
    } catch (e) {
      this.#warnings.push(`no undo inverse recorded: ${(e as Error).message}`);
    }
  }

  #fingerprint(path: string): UndoCheck {
    const st = Deno.lstatSync(path);
    if (st.isSymlink) throw new Error(`${path} is a symlink (never fingerprinted)`);
    const mtimeMs = st.mtime?.getTime();
    if (st.isDirectory) {
      return mtimeMs === undefined ? { path, expect: "dir" } : { path, expect: "dir", mtimeMs };
    }
    if (!st.isFile) throw new Error(`${path} is not a regular file or directory`);
    const c: UndoCheck = { path, expect: "file", size: st.size };
    if (mtimeMs !== undefined) c.mtimeMs = mtimeMs;
    if (st.size <= HASH_FINGERPRINT_MAX) {
      this.#hasher.reset();
      this.#hasher.update(Deno.readFileSync(path));
      c.blake3 = this.#hasher.digestHex();
    }
    return c;
  }

  #ask(op: "query" | "undo", params: Record<string, unknown>): Promise<unknown> {
    const rid = this.#nextRid++;
    return new Promise((resolve, reject) => {
      this.#replies.set(rid, { resolve, reject });
      this.#post({ t: "jreq", rid, op, params });
    });
  }

  /** The main thread answered a journal request. */
  reply(m: JReplyMsg): void {
    const p = this.#replies.get(m.rid);
    if (!p) return;
    this.#replies.delete(m.rid);
    if (m.ok) p.resolve(m.result);
    else p.reject(fail(m.error.code, m.error.message, m.error.hint ?? null));
  }

  async query(q: JournalQuery): Promise<Value> {
    const rows = await this.#ask("query", { ...q }) as Array<Record<string, unknown>>;
    return new TableV(rows.map((r) =>
      new RecordV(
        new Map<string, Value>([
          ["id", r.id as number],
          ["ts", new DateTimeV(BigInt(Math.round((r.ts as number) / 1e6)) * 1_000_000n, "UTC")],
          ["principal", r.principal as string],
          ["session", r.session as string],
          ["src", r.src as string],
          ["ok", r.ok as boolean | null],
          ["status", r.status as number | null],
          ["effects", new ListV((r.effects as Effect[]).map((e) => jsonToValue(e)))],
        ]),
      )
    ));
  }

  async undo(id: number | null): Promise<Value> {
    const r = await this.#ask("undo", { id }) as {
      journalId: number;
      undone: Array<{ kind: string; path: string }>;
    };
    return new RecordV(
      new Map<string, Value>([
        ["id", r.journalId],
        [
          "undone",
          new ListV(
            r.undone.map((u) =>
              new RecordV(new Map<string, Value>([["kind", u.kind], ["path", u.path]]))
            ),
          ),
        ],
      ]),
    );
  }

  /**
   * Capture options of a journaling session: stdout beyond the in-memory cap spills (then goes
   * to the CAS, see {@link ingestSpill}); `SHOAL_CAPTURE_CAP_BYTES` (read once) lowers the cap.
   */
  spillOptions(opts: { stdoutCap?: number }): { spill: SpillFactory; stdoutCap?: number } {
    return opts.stdoutCap === undefined && CAPTURE_CAP !== null
      ? { spill: this.spill, stdoutCap: CAPTURE_CAP }
      : { spill: this.spill };
  }

  /** Where spilled stdout goes first: temp files beside the blobs (GC removes stale ones). */
  get spill(): SpillFactory {
    return (this.#spill ??= tempFileSpill({ dir: this.cas.tmpDir, prefix: ".tmp-spill-" }));
  }
  #spill: SpillFactory | null = null;

  /**
   * A capture that spilled: store the whole stdout (in-memory prefix + spill file) in the CAS
   * and report it as `stdoutRef`/`stdoutSize` (the outcome's lazy bytes). The spill file is
   * removed either way; a failed put leaves the truncated prefix and a warning.
   */
  async ingestSpill(
    r: CaptureResult,
  ): Promise<CaptureResult & { stdoutRef?: string; stdoutSize?: number }> {
    const s = r.stdoutSpill;
    if (!s) return r;
    try {
      const file = await Deno.open(s.path, { read: true });
      const prefix = r.stdout;
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          if (prefix.length) c.enqueue(prefix);
        },
        async pull(c) {
          const buf = new Uint8Array(1 << 20);
          const n = await file.read(buf);
          if (n === null) {
            file.close();
            c.close();
          } else c.enqueue(buf.subarray(0, n));
        },
        cancel() {
          file.close();
        },
      });
      const put = await this.cas.putStream(stream);
      return { ...r, stdoutRef: put.ref, stdoutSize: put.size };
    } catch (e) {
      this.#warnings.push(`storing spilled stdout failed: ${(e as Error).message}`);
      return r;
    } finally {
      await Deno.remove(s.path).catch(() => {});
    }
  }

  /** True for lazy content-store bytes (`data` holds only a prefix). */
  static isLazy(v: Value): v is BytesV {
    return v instanceof BytesV && v.ref !== null && v.size > v.data.length;
  }

  /**
   * `value.get` slice `[a, b)` of lazy bytes, read (verified) from the CAS; clamped like any
   * slice. Bytes without the prefix limitation come back (no ref: they are materialised).
   */
  async lazySlice(v: BytesV, a: number, b: number, ref: string): Promise<BytesV> {
    const start = Math.min(a, v.size);
    const end = Math.min(Math.max(b, start), v.size);
    if (end - start > BLOB_READ_CAP) {
      throw new RpcError(
        RPC.BAD_PATH_OR_SLICE,
        `a slice of content-store bytes may be at most ${BLOB_READ_CAP} bytes`,
        { ref },
      );
    }
    try {
      return new BytesV((await this.cas.getRange(v.ref!, start, end - start)).data);
    } catch (e) {
      const code = (e as { code?: string }).code === "blob_not_found" ? "not_found" : "io_error";
      throw new RpcError(RPC.UNKNOWN_REF, `cannot read ${v.ref}: ${(e as Error).message}`, {
        ref,
        code,
      });
    }
  }

  /** The whole content of lazy bytes (JournalPort). */
  loadBytes(ref: string): Promise<Uint8Array> {
    return this.cas.get(ref);
  }

  // ---- val:blake3 refs -----------------------------------------------------------------------

  /** `"val:blake3:<hex>"` as a method receiver: the stored value (wire JSON) or its bytes. */
  async resolveRef(ref: string, span: [number, number] | null): Promise<Value> {
    let data: Uint8Array;
    try {
      data = await this.cas.get(ref);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "blob_not_found" || code === "bad_ref") {
        throw fail(
          "not_found",
          `cannot resolve \`${ref}\`: no such blob in the content store`,
          null,
          span,
        );
      }
      throw fail("io_error", `cannot load \`${ref}\`: ${(e as Error).message}`, null, span);
    }
    try {
      const w = JSON.parse(strict.decode(data));
      if (w !== null && typeof w === "object" && typeof (w as { $?: unknown }).$ === "string") {
        return decodeWire(w);
      }
    } catch { /* not a value blob */ }
    return new BytesV(data, ref);
  }

  // ---- exec records --------------------------------------------------------------------------

  /** Forget what the previous exec observed. */
  startExec(): void {
    this.#effects = [];
    this.#undo = [];
    this.#warnings = [];
  }

  /** An output: inline preview when small UTF-8 text, else a CAS blob (failures → warnings). */
  async output(kind: string, bytes: Uint8Array, truncated = false): Promise<OutputRecord | null> {
    if (bytes.length === 0) return null;
    if (bytes.length <= PREVIEW_MAX_BYTES) {
      try {
        // Kept in the row (no blob file per exec); its hash still resolves through blob.get.
        const preview = strict.decode(bytes);
        this.#hasher.reset();
        this.#hasher.update(bytes);
        const o: OutputRecord = {
          kind,
          len: bytes.length,
          preview,
          hash: this.#hasher.digestHex(),
        };
        if (truncated) o.truncated = true;
        return o;
      } catch { /* binary: store it */ }
    }
    try {
      const r = await this.cas.put(bytes);
      const o: OutputRecord = { kind, len: bytes.length, ref: r.ref };
      if (truncated) o.truncated = true;
      return o;
    } catch (e) {
      this.#warnings.push(`storing the ${kind} output failed: ${(e as Error).message}`);
      return null;
    }
  }

  /**
   * Build the exec's journal record (CAS puts happen here, in this worker). Never throws: a
   * problem becomes a warning the kernel reports, and the row is still written.
   */
  async record(...args: Parameters<SessionJournal["buildRecord"]>): Promise<ExecRecord> {
    try {
      return await this.buildRecord(...args);
    } catch (e) {
      const [, raised, , , , , t0, cancelled] = args;
      return {
        status: raised === null ? "ok" : cancelled ? "cancelled" : "error",
        ok: false,
        durationNs: Math.round((performance.now() - t0) * 1e6),
        exitStatus: null,
        signal: null,
        outputs: [],
        error: raised ? { code: raised.code, message: raised.msg } : null,
        effects: this.#effects,
        statements: [],
        undo: [],
        warnings: [...this.#warnings, `recording the exec failed: ${(e as Error)?.message ?? e}`],
      };
    }
  }

  /** {@link record} without the safety net. */
  async buildRecord(
    value: Value | undefined,
    raised: ErrorV | null,
    responseWire: unknown,
    render: string,
    facts: StmtFacts[],
    source: string,
    t0: number,
    cancelled: boolean,
    outcomeOut: (o: OutcomeV) => Value,
  ): Promise<ExecRecord> {
    const outputs: OutputRecord[] = [];
    const push = (o: OutputRecord | null) => o && outputs.push(o);
    let known = value !== null && typeof value === "object" && raised === null
      ? this.#valueOutputs.get(value)
      : undefined;
    // Retention may have collected the blob since (its rows expired): store it again then.
    // Reusing it refreshes it, like a second put, so a GC run in progress keeps it.
    if (known?.ref !== undefined && !(await this.cas.refresh(known.ref).catch(() => false))) {
      known = undefined;
    }
    if (known !== undefined) push(known);
    else if (value !== undefined && raised === null) {
      let full = null;
      const obj = value !== null && typeof value === "object" ? value : null;
      // A value known to be over the blob bound is not encoded again just to find out.
      if (obj === null || !this.#overBound.has(obj)) {
        try {
          full = encodeBounded(value, VALUE_BLOB_MAX, outcomeOut);
        } catch {
          // A failed outcome's `out` raises cmd_failed: keep the response's elided form (D-19).
        }
        if (full === null && obj !== null) this.#overBound.add(obj);
      }
      const wire = full ?? responseWire;
      if (wire !== undefined) {
        const o = await this.output("value", enc.encode(JSON.stringify(wire)), full === null);
        push(o);
        // Values are immutable: the same (big) value shown again is not encoded and hashed
        // again (`exec "big"` of a stored million-row table).
        if (o?.ref !== undefined && value !== null && typeof value === "object") {
          this.#valueOutputs.set(value, o);
        }
      }
    }
    if (render !== "") push(await this.output("render", enc.encode(render)));
    const last = raised ?? value;
    if (last instanceof OutcomeV && last.stdoutRef !== null) {
      push({ kind: "stdout", len: last.stdoutSize, ref: last.stdoutRef });
      push(await this.output("stderr", last.stderr, last.stderrTruncated));
    } else if (last instanceof OutcomeV) {
      push(await this.output("stdout", last.stdout, last.stdoutTruncated));
      push(await this.output("stderr", last.stderr, last.stderrTruncated));
    } else if (raised?.stderr) {
      push(await this.output("stderr", enc.encode(raised.stderr)));
    }
    const undo: UndoIntent[] = [];
    for (const { intent: u, precondition } of this.#undo) {
      if (u.kind === "restore_bytes") {
        try {
          // Power-loss durable: these bytes exist nowhere else.
          const r = await this.cas.put(u.prior, { fsync: true });
          undo.push({ kind: "restore_bytes", data: { path: u.path, prior: r.ref }, precondition });
        } catch (e) {
          this.#warnings.push(`no undo inverse for ${u.path}: ${(e as Error).message}`);
        }
      } else if (u.kind === "trash_move") {
        undo.push({
          kind: "trash_move",
          data: { original: u.original, trash: u.trash },
          precondition,
        });
      } else {
        undo.push({ kind: "move_back", data: { from: u.from, to: u.to }, precondition });
      }
    }
    const semOk = raised === null && !(value instanceof OutcomeV && !value.ok);
    const status = raised === null
      ? "ok"
      : cancelled || raised.code === "cancelled"
      ? "cancelled"
      : "error";
    const out = last instanceof OutcomeV ? last : null;
    return {
      status,
      ok: semOk,
      durationNs: Math.round((performance.now() - t0) * 1e6),
      exitStatus: out?.status ?? raised?.status ?? null,
      signal: out?.signal ?? null,
      outputs,
      error: raised ? { code: raised.code, message: raised.msg } : null,
      effects: this.#effects,
      statements: statementRows(facts, source),
      undo,
      warnings: this.#warnings,
    };
  }
}

/** A statement's row; `bytes` is the source's UTF-8 (spans are byte offsets into it). */
function statementRow(f: StmtFacts, source: string, bytes: Uint8Array): StatementInput {
  const [a, b] = f.stmt.span;
  const text = a === 0 && b === bytes.length ? source : utf8.decode(bytes.subarray(a, b));
  const v = f.value;
  const status = f.error ? (f.error.code === "cancelled" ? "cancelled" : "error") : "ok";
  const out = v instanceof OutcomeV ? v : null;
  const row: StatementInput = {
    source: text,
    ast: f.stmt,
    startedAt: f.startedAt,
    status,
    ok: f.error === null && !(out !== null && !out.ok),
    durationNs: Math.round((performance.now() - f.t0) * 1e6),
    exitStatus: out?.status ?? f.error?.status ?? null,
    signal: out?.signal ?? null,
    error: f.error ? { code: f.error.code, message: f.error.msg } : null,
  };
  return row;
}

/**
 * Evaluate a program one top-level statement at a time (same semantics as
 * `evalProgram(program, position)`: non-final values go to the sink, an `exit` stops the rest)
 * so each statement gets its own journal row. `facts` receives one entry per statement run.
 */
export function evalByStatement(
  ev: Evaluator,
  program: Program,
  position: "stmt" | "value",
  facts: StmtFacts[],
  toError: (e: unknown) => ErrorV,
): MaybePromise<Value> {
  const body = program.body;
  if (body.length <= 1) {
    if (body.length === 1) {
      facts.push({
        stmt: body[0],
        startedAt: Date.now(),
        t0: performance.now(),
        value: undefined,
        error: null,
      });
    }
    const f = facts[facts.length - 1];
    const done = (v: Value) => {
      if (f) f.value = v;
      return v;
    };
    const failed = (e: unknown): never => {
      if (f) f.error = toError(e);
      throw e;
    };
    try {
      const r = ev.evalProgram(program, position);
      return isPromise(r) ? r.then(done, failed) : done(r);
    } catch (e) {
      return failed(e);
    }
  }
  const step = (i: number): MaybePromise<Value> => {
    for (; i < body.length; i++) {
      const last = i === body.length - 1;
      const f: StmtFacts = {
        stmt: body[i],
        startedAt: Date.now(),
        t0: performance.now(),
        value: undefined,
        error: null,
      };
      facts.push(f);
      const one: Program = { ...program, body: [body[i]], span: body[i].span };
      let r: MaybePromise<Value>;
      try {
        r = ev.evalProgram(one, last ? position : "stmt");
      } catch (e) {
        f.error = toError(e);
        throw e;
      }
      const after = (v: Value): MaybePromise<Value> | typeof CONTINUE => {
        f.value = v;
        if (last || ev.pendingExit !== null) return v;
        const s = ev.sink(v, body[i]);
        return isPromise(s) ? s.then(() => step(i + 1)) : CONTINUE;
      };
      if (isPromise(r)) {
        return r.then((v) => {
          const a = after(v);
          return a === CONTINUE ? step(i + 1) : a;
        }, (e) => {
          f.error = toError(e);
          throw e;
        });
      }
      const a = after(r);
      if (a !== CONTINUE) return a;
    }
    return null;
  };
  return step(0);
}

const CONTINUE = Symbol("continue");

export type { StmtFacts };
