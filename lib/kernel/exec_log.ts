/**
 * A session worker's journal log of its execs (issue 7), over the journal intake
 * (`lib/store/intake.ts`). Every exec's record is in the intake before its result is
 * delivered. Its begin line (the `running` row a crash leaves `unfinished`) is written as soon
 * as the exec can have done anything a crash should not hide — its first reported effect, or
 * the moment it starts waiting on something — and otherwise travels with the finish in one
 * line: an exec that ran start to finish without effects or waits costs one write, not two.
 *
 * @module
 */

import type { BeginRequestInput, IntakeEvent } from "../store/mod.ts";
import type { IntakePort } from "./journal_ports.ts";
import { type ExecRecord, type JournalDone, outcomeOf } from "./journal_messages.ts";

/** The running exec's log state. */
interface Open {
  k: number;
  /** Its begin row, until written (null once the begin line is in the intake). */
  row: BeginRequestInput | null;
  /** Why its begin line could not be written (the exec then has no journal row). */
  error: string | null;
}

const why = (e: unknown) => (e as Error)?.message ?? String(e);

/** The exec log of one session worker. */
export class ExecLog {
  readonly #w: IntakePort;
  #open: Open | null = null;

  constructor(writer: IntakePort) {
    this.#w = writer;
  }

  /** An exec starts (its source parsed, or not): its begin line waits for a reason. */
  start(row: BeginRequestInput): void {
    this.#open = { k: this.#w.nextKey(), row, error: null };
  }

  /** Write the running exec's begin line now, if it has not been (an effect, a wait). */
  begun(): void {
    const o = this.#open;
    if (o === null || o.row === null || o.error !== null) return;
    try {
      this.#w.append({ t: "b", k: o.k, row: o.row });
      o.row = null;
    } catch (e) {
      o.error = `logging the exec to the journal intake failed: ${why(e)}`;
    }
  }

  /**
   * The exec finished: its record — with its transcript event, if it has one — goes to the
   * intake before the result is delivered.
   */
  finish(rec: ExecRecord, ev?: IntakeEvent): JournalDone {
    const o = this.#open;
    this.#open = null;
    const warnings = rec.warnings.splice(0);
    if (o === null) return { warnings, error: "the exec was not logged to the journal intake" };
    if (o.error !== null) return { warnings, error: o.error };
    const finish = {
      k: o.k,
      result: outcomeOf(rec),
      statements: rec.statements,
      undo: rec.undo,
      ...(ev ? { ev } : {}),
    };
    try {
      if (o.row !== null) {
        // Statement ASTs that are the program's own statements travel once, in the row.
        const body = (o.row.ast as { body?: unknown[] } | null | undefined)?.body;
        const fromBody = body !== undefined && rec.statements.length === body.length &&
          rec.statements.every((st, i) => st.ast === body[i]);
        if (fromBody) {
          const statements = rec.statements.map((st) => ({ ...st, ast: undefined }));
          this.#w.append({ t: "x", row: o.row, ...finish, statements, stmtAst: "body" });
        } else this.#w.append({ t: "x", row: o.row, ...finish });
      } else this.#w.append({ t: "f", ...finish });
      return { warnings, error: null };
    } catch (e) {
      return {
        warnings,
        error: `logging the exec's outcome to the journal intake failed: ${why(e)}`,
      };
    }
  }
}
