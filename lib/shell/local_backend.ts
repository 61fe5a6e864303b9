/**
 * The local REPL's backend: an in-process evaluator whose statement-position commands run on
 * PTYs (pty_tee.ts), with job control (`jobs`, `fg`, `bg`, Ctrl-Z), Ctrl-C that cancels only
 * the running submission, `it`/`out[n]`, init files, and SIGTERM/SIGHUP that end every child
 * before shoal goes.
 *
 * @module
 */

import { OutcomeV, typeName, type Value } from "../value/types.ts";
import { type Evaluator, toErrorValue } from "../eval/mod.ts";
import { completeAt } from "../eval/complete.ts";
import {
  type CaptureOptions,
  type CaptureResult,
  type Pty,
  signalGroup,
  spawnCapture,
} from "../exec/mod.ts";
import type { ShoalConfig } from "../config/mod.ts";
import { echoes, exitStatusOf, hostEvaluator, printValue, reportError } from "./host.ts";
import { isStructured, present, presentOptions } from "./present.ts";
import { wasStreamed } from "./streamed.ts";
import { foregroundFor } from "./foreground.ts";
import { type Job, JobTable } from "./jobs.ts";
import { colorSupported, Terminal } from "./terminal.ts";
import { page, pagerArgv, rowsOf } from "./pager.ts";
import { writeFd } from "./foreground_pipe.ts";
import type { ReplBackend } from "./repl.ts";

const enc = new TextEncoder();

function say(text: string): void {
  try {
    writeFd(Deno.stdout, enc.encode(text));
  } catch { /* gone */ }
}

const JOB_VERB = /^\s*(fg|bg)(?:\s+%?(\d+))?\s*$/;

/** Build the backend; a number is a start-up failure's exit status (a bad init file). */
export async function localBackend(
  config: ShoalConfig,
  cwd: string,
  env: Record<string, string>,
): Promise<ReplBackend | number> {
  const term = Terminal.shared();
  const jobs = new JobTable();
  const live = new Set<Pty>();
  const groups = new Set<number>();
  const cancel = new Int32Array(new SharedArrayBuffer(4));
  const color = colorSupported(config.render.color, env);
  let interrupted = false;
  const notices: string[] = [];
  const tty = Deno.stdout.isTerminal();
  const show = (v: Value) => present(v, { ...presentOptions(config.render, tty), cwd: ev.cwd() });
  const echo = echoes(config.render.echo ?? "all");
  const fg = foregroundFor(tty, {
    jobs,
    live,
    onInterrupt: () => (interrupted = true),
  });
  // Captured children are remembered so a SIGHUP can end them with shoal.
  const capture = (o: CaptureOptions): Promise<CaptureResult> =>
    spawnCapture({
      ...o,
      onSpawn: (pid) => {
        groups.add(pid);
        o.onSpawn?.(pid);
      },
    }).then((r) => {
      groups.delete(r.pid);
      return r;
    });
  const ev: Evaluator = await hostEvaluator({
    config,
    repl: true,
    cwd,
    env,
    sink: (v) => {
      if (echo(v)) printValue(v, show, false);
    },
    foreground: fg,
    capture,
    cancel,
    warn: (m) => console.error(`shoal: warning: ${m}`),
  });

  // Init files run in order; one that is missing or fails stops start-up (§11).
  for (const file of config.init.files) {
    let src: string;
    try {
      src = await Deno.readTextFile(file);
    } catch (e) {
      console.error(`shoal: init file ${file}: ${(e as Error).message}`);
      return 1;
    }
    try {
      await ev.evalSource(src);
    } catch (e) {
      reportError(e, src, file, color);
      return 1;
    }
  }

  // SIGTERM / SIGHUP: every child goes with us, and the terminal is left as we found it.
  const ending = async (sig: Deno.Signal, status: number) => {
    Atomics.store(cancel, 0, 1);
    for (const g of groups) signalGroup(g, "SIGTERM");
    // PTY programs are killed outright (close: SIGKILL to their sessions); waiting for them to
    // be reaped is bounded, so shoal always goes.
    const closing = Promise.all([...live].map((p) => p.close().catch(() => {})))
      .then(() => jobs.closeAll());
    await Promise.race([closing, new Promise((r) => setTimeout(r, 2_000))]);
    for (const g of groups) signalGroup(g, "SIGKILL");
    term.restore();
    Deno.removeSignalListener(sig, handlers[sig]!);
    Deno.exit(status);
  };
  const handlers: Partial<Record<Deno.Signal, () => void>> = {
    SIGTERM: () => void ending("SIGTERM", 143),
    SIGHUP: () => void ending("SIGHUP", 129),
  };
  for (const [s, h] of Object.entries(handlers)) {
    try {
      Deno.addSignalListener(s as Deno.Signal, h!);
    } catch { /* unsupported here */ }
  }

  /** Print the submission's value; its status for the prompt. */
  const printFinal = async (v: Value): Promise<number> => {
    if (v === null) return 0;
    if (v instanceof OutcomeV && !isStructured(v)) {
      if (!wasStreamed(v.stdout)) writeFd(Deno.stdout, v.stdout);
      return v.status ?? (v.ok ? 0 : 1);
    }
    const opts = presentOptions(config.render, tty);
    const text = show(v);
    const rows = term.size().rows;
    if (config.render.paging === "auto" && tty && rowsOf(text, opts.width) > rows - 1) {
      const envNow = Object.fromEntries(ev.env());
      if (await page(text, pagerArgv(config.render.pager, envNow), fg, ev.cwd(), envNow)) {
        return 0;
      }
    }
    say(text + "\n");
    return 0;
  };

  const evaluate = async (src: string): Promise<number> => {
    try {
      const v = await ev.evalSource(src);
      if (ev.pendingExit !== null) return ev.pendingExit;
      return await printFinal(v);
    } catch (e) {
      const err = toErrorValue(e);
      // Ctrl-C: the program died of it, or the language stopped; no diagnostic for that.
      if (
        interrupted &&
        (err.code === "cancelled" || (err.code === "cmd_failed" && err.status === null))
      ) {
        say("\n");
        return 130;
      }
      reportError(e, src, "<repl>", color);
      return exitStatusOf(e);
    }
  };

  /** Wait for a submission, or for its program to stop (Ctrl-Z: the prompt comes back). */
  const foreground = async (sub: Promise<number>): Promise<number> => {
    term.onInterrupt(() => {
      interrupted = true;
      Atomics.store(cancel, 0, 1);
    });
    const stop = jobs.nextStop();
    try {
      const r = await Promise.race([
        sub.then((s) => ({ done: s })),
        stop.promise.then((job) => ({ job })),
      ]);
      if ("done" in r) return r.done;
      const job = r.job;
      job.submission = sub;
      say(`\r\n[${job.id}]+  Stopped  ${job.cmd}\r\n`);
      return 148;
    } finally {
      stop.cancel();
      term.onInterrupt(null);
    }
  };

  const pick = (n: string | undefined): Job | undefined =>
    n === undefined ? jobs.current() : jobs.get(Number(n));

  const resumeJob = async (verb: string, n: string | undefined): Promise<number> => {
    const job = pick(n);
    if (job === undefined) {
      say(`shoal: ${verb}: ${n === undefined ? "no current job" : `%${n}: no such job`}\n`);
      return 1;
    }
    const sub = job.submission ?? Promise.resolve(0);
    if (verb === "bg") {
      job.state = "running";
      job.pty.resume();
      say(`[${job.id}]+ ${job.cmd} &\n`);
      sub.then(() => notices.push(`[${job.id}]   Done  ${job.cmd}`));
      return 0;
    }
    say(`${job.cmd}\n`);
    job.state = "running";
    job.attach();
    job.pty.resume();
    return await foreground(sub as Promise<number>);
  };

  const listJobs = (): number => {
    for (const j of jobs.list()) say(`[${j.id}]  ${j.state.padEnd(8)} ${j.cmd}\n`);
    return 0;
  };

  return {
    run: (src) => {
      interrupted = false;
      Atomics.store(cancel, 0, 0);
      const verb = JOB_VERB.exec(src);
      if (verb !== null && jobs.size > 0) return resumeJob(verb[1], verb[2]);
      if (/^\s*jobs\s*$/.test(src) && jobs.size > 0 && ev.tasks.length === 0) {
        return Promise.resolve(listJobs());
      }
      if (/^\s*jobs\s*$/.test(src) && jobs.size > 0) listJobs();
      return foreground(evaluate(src));
    },
    complete: (src, cursor) =>
      completeAt(src, cursor, {
        names: namesOf(ev),
        cwd: ev.cwd(),
        env: ev.env(),
        fuzzy: config.completion.fuzzy,
        caseInsensitive: config.completion.case_insensitive,
        maxResults: config.completion.max_results,
      }),
    cwd: () => ev.cwd(),
    exitCode: () => ev.pendingExit,
    jobCount: () => jobs.size,
    notices: () => notices.splice(0),
    close: async () => {
      if (jobs.size) say(`shoal: ending ${jobs.size} stopped job(s)\n`);
      await jobs.closeAll();
      for (const [s, h] of Object.entries(handlers)) {
        try {
          Deno.removeSignalListener(s as Deno.Signal, h!);
        } catch { /* never added */ }
      }
    },
  };
}

/** Root bindings → type names (for completion of methods). */
function namesOf(ev: Evaluator): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of ev.root.names()) {
    const v = ev.root.lookup(n)?.v;
    out[n] = v === undefined ? "null" : typeName(v);
  }
  return out;
}
