/**
 * Argument binding for adapted commands (subsystems §7): a call's words against the
 * selected spec's `params`, `positional`, `flags` and `consumed`, giving the argv to spawn and
 * the value bound to each parameter (for effect templates). Everything that can be refused is
 * refused here, before anything is spawned, as `arg_error`.
 *
 * Words are walked in order, so the tool sees its arguments in the order they were written:
 * - `--name` / `--name=v` / `--name v`: a declared parameter (`--dry-run` is `dry_run`); a bool
 *   is presence (`--all=false` drops it), anything else takes the attached or the next word;
 * - `-abc`: each character through `flags.short`; a value parameter takes the rest of the group
 *   (`-n5`) or the next word; `-<digits>` binds `flags.number` (`git log -5`);
 * - other words fill `positional` in order (a `list<T>` parameter takes the rest); words past
 *   the declared positionals are forwarded unchecked; after `--` everything is.
 * A declared parameter is forwarded in its canonical spelling — `--kebab-name=value` (one word:
 * it also suits options whose value is optional), or `-x value` for a one-character name —
 * unless it is `consumed`. Word values are validated with
 * the language's word binding (§6.2) and forwarded as written; other values through argv
 * conversion (§6.3). A `glob` parameter receives its pattern unexpanded; a glob word anywhere
 * else expands (by the caller, see {@link Piece}).
 *
 * A spec without `params` forwards every word unchecked.
 *
 * @module
 */

import type { Span } from "../../syntax/ast.ts";
import { GlobV, ListV } from "../../value/types.ts";
import { fail, ShoalError } from "../../value/errors.ts";
import { coerceWord, toArgv } from "../../value/coerce.ts";
import { renderInline } from "../../value/render.ts";
import type { ArgvItem } from "../../exec/mod.ts";
import { nearest } from "../errors.ts";
import { type BoundValue, type EffectTemplate, UNKNOWN } from "./effects.ts";
import type { AdapterSpec, CallSpec, ParamType } from "./schema.ts";

/** One command word, evaluated (or {@link UNKNOWN} while a plan is derived). */
export type Token =
  | { k: "long"; name: string; raw: string; value?: BoundValue; span: Span }
  | { k: "short"; chars: string; span: Span }
  | { k: "dd"; span: Span }
  /** `literal`: a bare word as written (only those select a subcommand). */
  | { k: "word"; v: BoundValue; literal: boolean; span: Span };

/** An argv entry: ready, a glob the caller expands in place, or unknown (plans). */
export type Piece = ArgvItem | { glob: GlobV; span: Span; prefix?: string } | typeof UNKNOWN;

/** A bound call. */
export interface BoundCall {
  spec: AdapterSpec;
  /** The selected call shape (a sub's, or the head's top level). */
  call: CallSpec;
  sub: string | null;
  /** `[bin, ...invoke, ...arguments]`. */
  argv: Piece[];
  /** Parameter → the values bound to it, in order. */
  values: Map<string, BoundValue[]>;
  /** The selected call's effect templates. */
  effects: readonly EffectTemplate[];
}

/** The spelling a declared parameter is forwarded with. */
export function flagSpelling(name: string): string {
  return name.length === 1 ? `-${name}` : `--${name.replaceAll("_", "-")}`;
}

function argError(msg: string, hint: string | null, span: Span): ShoalError {
  return fail("arg_error", msg, hint, span);
}

/** Forward a value as argv pieces (globs expand, lists are refused like any external). */
function pieces(v: BoundValue, span: Span): Piece[] {
  if (v === UNKNOWN) return [UNKNOWN];
  if (v instanceof GlobV) return [{ glob: v, span }];
  try {
    return [toArgv(v)];
  } catch (e) {
    if (e instanceof ShoalError && e.err.span === null) {
      throw fail(e.err.code, e.err.msg, e.err.hint, span);
    }
    throw e;
  }
}

/** `--name=value` as one argv word (`--name=` + the value's bytes). */
function attach(spelling: string, p: Piece): Piece {
  if (p === UNKNOWN) return UNKNOWN;
  if (typeof p === "string") return `${spelling}=${p}`;
  if (p instanceof Uint8Array) {
    const head = new TextEncoder().encode(spelling + "=");
    const out = new Uint8Array(head.length + p.length);
    out.set(head);
    out.set(p, head.length);
    return out;
  }
  return { glob: p.glob, span: p.span, prefix: spelling + "=" };
}

/** A word forwarded unchecked (the generic external rules, §9.2). */
function forward(t: Token): Piece[] {
  switch (t.k) {
    case "dd":
      return ["--"];
    case "short":
      return ["-" + t.chars];
    case "long":
      if (t.value === undefined) return ["--" + t.raw];
      if (t.value === UNKNOWN) return [UNKNOWN];
      return [`--${t.raw}=${typeof t.value === "string" ? t.value : renderInline(t.value)}`];
    case "word":
      return pieces(t.v, t.span);
  }
}

/**
 * A flag the adapter does not declare. The command then runs as the plain tool (its own text
 * output) rather than failing: agents type `git log --oneline`, and a format flag is exactly
 * what an adapter cannot parse anyway (`adapterAccepts`).
 */
export class UnknownAdapterFlag extends ShoalError {}

class Binder {
  readonly argv: Piece[] = [];
  readonly values = new Map<string, BoundValue[]>();
  private posIndex = 0;

  constructor(readonly call: CallSpec, readonly params: ReadonlyMap<string, ParamType>) {}

  private label(): string {
    return `\`${this.call.label}\``;
  }

  private noFlag(spelling: string, span: Span): ShoalError {
    const known = [...this.params.keys()].map(flagSpelling);
    for (const [c] of this.call.short) known.push(`-${c}`);
    const near = nearest(spelling, known);
    const head = this.call.label.split(" ")[0];
    const raw = `run the tool's own CLI with ^${head} …`;
    const e = argError(
      `${this.label()} has no flag \`${spelling}\``,
      near === null ? raw : `did you mean \`${near}\`? (or ${raw})`,
      span,
    );
    return new UnknownAdapterFlag(e.err);
  }

  /** Validate `v` for `name`, record it, and forward it unless consumed. */
  bind(name: string, v: BoundValue, span: Span, asFlag: boolean): void {
    const p = this.params.get(name)!;
    const items: BoundValue[] = p.list && v instanceof ListV ? v.items : [v];
    const list = this.values.get(name) ?? [];
    this.values.set(name, list);
    for (const item of items) {
      let typed: BoundValue = item;
      if (
        item !== UNKNOWN && !(item instanceof GlobV && (p.base === "glob" || p.base === "path"))
      ) {
        try {
          typed = coerceWord(item, p.ref);
        } catch (e) {
          if (!(e instanceof ShoalError)) throw e;
          const where = asFlag ? flagSpelling(name) : `<${name}>`;
          throw argError(`${this.label()} ${where}: ${e.err.msg}`, e.err.hint, span);
        }
      }
      if (p.base === "bool") {
        if (typed !== true && typed !== false && typed !== UNKNOWN) {
          throw argError(
            `${this.label()} ${flagSpelling(name)} is a switch: it takes true or false`,
            null,
            span,
          );
        }
        list.push(typed);
        if (typed !== false && !this.call.consumed.has(name)) this.argv.push(flagSpelling(name));
        continue;
      }
      list.push(typed);
      if (this.call.consumed.has(name)) continue;
      // A glob parameter receives its pattern; a word is forwarded as written.
      const out: BoundValue = item instanceof GlobV && p.base === "glob" ? item.pattern : item;
      if (!asFlag) this.argv.push(...pieces(out, span));
      else if (name.length === 1 || this.call.values === "separate") {
        this.argv.push(flagSpelling(name), ...pieces(out, span));
      } else this.argv.push(...pieces(out, span).map((x) => attach(flagSpelling(name), x)));
    }
  }

  /** The value word after a value-taking flag. */
  private nextValue(tokens: readonly Token[], i: number, spelling: string, span: Span): BoundValue {
    const t = tokens[i];
    if (t === undefined || t.k !== "word") {
      throw argError(`${this.label()} ${spelling} requires a value`, null, span);
    }
    return t.v;
  }

  run(tokens: readonly Token[]): void {
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (t.k === "dd") {
        this.argv.push("--");
        for (const rest of tokens.slice(i + 1)) this.argv.push(...forward(rest));
        return;
      }
      if (t.k === "long") {
        const p = this.params.get(t.name);
        if (p === undefined) throw this.noFlag("--" + t.raw, t.span);
        if (t.value !== undefined || p.base === "bool") {
          this.bind(t.name, t.value ?? true, t.span, true);
        } else {this.bind(
            t.name,
            this.nextValue(tokens, ++i, flagSpelling(t.name), t.span),
            t.span,
            true,
          );}
        continue;
      }
      if (t.k === "short") {
        i = this.shortGroup(tokens, i, t);
        continue;
      }
      this.positional(t);
    }
  }

  private shortGroup(tokens: readonly Token[], i: number, t: Token & { k: "short" }): number {
    if (this.call.number !== null && /^[0-9]+$/.test(t.chars)) {
      this.bind(this.call.number, t.chars, t.span, true);
      return i;
    }
    for (let j = 0; j < t.chars.length; j++) {
      const name = this.call.short.get(t.chars[j]) ??
        (this.params.has(t.chars[j]) ? t.chars[j] : undefined);
      if (name === undefined) throw this.noFlag("-" + t.chars[j], t.span);
      if (this.params.get(name)!.base === "bool") {
        this.bind(name, true, t.span, true);
        continue;
      }
      const rest = t.chars.slice(j + 1);
      const v = rest !== "" ? rest : this.nextValue(tokens, ++i, "-" + t.chars[j], t.span);
      this.bind(name, v, t.span, true);
      break;
    }
    return i;
  }

  private positional(t: Token & { k: "word" }): void {
    const names = this.call.positional;
    if (this.posIndex >= names.length) {
      this.argv.push(...pieces(t.v, t.span)); // past the declared positionals: unchecked
      return;
    }
    const name = names[this.posIndex];
    this.bind(name, t.v, t.span, false);
    if (!this.params.get(name)!.list) this.posIndex++;
  }

  checkRequired(span: Span): void {
    for (const [name, p] of this.params) {
      if (p.optional || p.base === "bool" || this.values.has(name)) continue;
      const what = this.call.positional.includes(name) ? `<${name}>` : flagSpelling(name);
      throw argError(`${this.label()} needs ${what} (${p.text})`, null, span);
    }
  }
}

/** Bind `tokens` (the words after the head) to `spec`; throws arg_error. */
export function bindCall(spec: AdapterSpec, tokens: readonly Token[], span: Span): BoundCall {
  const first = tokens[0];
  let sub: string | null = null;
  let call = spec.top;
  let rest = tokens;
  if (first !== undefined && first.k === "word" && first.literal && typeof first.v === "string") {
    const s = spec.subs.get(first.v);
    if (s !== undefined) {
      sub = first.v;
      call = s;
      rest = tokens.slice(1);
    }
  }
  // An interpreter's top-level `invoke` frames a `head { … }` program, not command words.
  const invoke = sub === null && spec.class === "interpreter" ? null : call.invoke;
  const argv: Piece[] = [spec.bin, ...(invoke ?? (sub !== null ? [sub] : []))];
  const values = new Map<string, BoundValue[]>();
  if (call.params === null) {
    for (const t of rest) argv.push(...forward(t));
  } else {
    const b = new Binder(call, call.params);
    b.run(rest);
    b.checkRequired(span);
    argv.push(...b.argv);
    for (const [k, v] of b.values) values.set(k, v);
  }
  return { spec, call, sub, argv, values, effects: call.effects };
}
