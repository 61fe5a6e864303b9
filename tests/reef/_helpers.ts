/**
 * Reef test helpers: a real temp tree (canonical path) with its own HOME, runtime dir (views)
 * and PATH, fake tools that answer `--version`, and sessions rooted in it.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { Evaluator, type EvaluatorOptions } from "../../lib/eval/mod.ts";
import type { Value } from "../../lib/value/types.ts";
import { ShoalError } from "../../lib/value/errors.ts";
import { renderInline } from "../../lib/value/render.ts";
import type { ReefContext } from "../../lib/reef/mod.ts";

/** A temp tree for one test. */
export class Tree {
  constructor(readonly root: string) {}

  /** Absolute path of `rel` in the tree. */
  path(rel: string): string {
    return join(this.root, rel);
  }

  /** Write `text` at `rel` (parents created). Returns the absolute path. */
  write(rel: string, text: string, mode?: number): string {
    const p = this.path(rel);
    Deno.mkdirSync(dirname(p), { recursive: true });
    Deno.writeTextFileSync(p, text);
    if (mode !== undefined) Deno.chmodSync(p, mode);
    return p;
  }

  /**
   * A fake executable at `rel`: `--version` prints `<name> <version>`; otherwise it prints
   * `<name> <version> ran <args>` (so a test sees which binary ran).
   */
  tool(rel: string, version: string): string {
    const name = rel.slice(rel.lastIndexOf("/") + 1);
    return this.write(
      rel,
      `#!/bin/sh\nif [ "$1" = --version ]; then echo "${name} ${version}"; exit 0; fi\n` +
        `echo "${name} ${version} ran" "$@"\n`,
      0o755,
    );
  }

  /** A session environment: tree HOME, runtime dir and `bin` first on PATH. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      HOME: this.path("home"),
      XDG_RUNTIME_DIR: this.path("run"),
      PATH: `${this.path("bin")}:/usr/local/bin:/usr/bin:/bin`,
      ...extra,
    };
  }

  /** A Reef context at `rel` (default: the root). */
  ctx(rel = ".", policy: ReefContext["policy"] = "script", extra = {}): ReefContext {
    return { cwd: this.path(rel), env: this.env(extra), policy };
  }

  /** An evaluator at `rel`; diagnostics collected in `stderr`. */
  session(rel = ".", opts: EvaluatorOptions = {}): Session {
    const s = new Session(this.path(rel), this.env(), opts);
    return s;
  }
}

/** An evaluator that keeps its diagnostics. */
export class Session {
  readonly ev: Evaluator;
  stderr = "";

  constructor(cwd: string, env: Record<string, string>, opts: EvaluatorOptions) {
    Deno.mkdirSync(cwd, { recursive: true });
    this.ev = new Evaluator({
      cwd,
      env,
      ...opts,
      ports: { stderr: (t) => (this.stderr += t), ...opts.ports },
    });
  }

  /** The value of `src`. */
  async run(src: string): Promise<Value> {
    return await this.ev.evalSource(src);
  }

  /** `src`'s value rendered inline. */
  async show(src: string): Promise<string> {
    return renderInline(await this.ev.evalSource(src));
  }

  /** The language error `src` raises (fails when it does not). */
  async error(src: string): Promise<ShoalError["err"]> {
    try {
      await this.ev.evalSource(src);
    } catch (e) {
      if (e instanceof ShoalError) return e.err;
      throw e;
    }
    throw new Error(`expected an error from: ${src}`);
  }
}

/** Run `fn` in a fresh tree that is removed afterwards. */
export async function withTree(fn: (t: Tree) => Promise<void> | void): Promise<void> {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "shoal-reef-test-" }));
  Deno.mkdirSync(join(root, "bin"));
  Deno.mkdirSync(join(root, "home"));
  try {
    await fn(new Tree(root));
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
}
