/**
 * The human shell at a terminal, against `script -q` (util-linux) in the same run:
 *
 * 1. keystroke → echo: a byte typed at the REPL prompt until the line editor's echo reaches the
 *    terminal, vs the same byte through `script -q -c cat` (the kernel's tty echo, relayed);
 * 2. child write → terminal (PtyTee): a program stamps each line with its clock when it writes
 *    it; the time until the line reaches the terminal, with the program run from the REPL vs
 *    under `script -q`.
 *
 * The terminal is a PTY we hold (lib/exec's openPty); both sides run on the same one-CPU-ish
 * machine, so only the ratios mean anything.
 *
 *   deno run -A --unstable-worker-options bench/shell.ts [samples]
 *
 * @module
 */

import { openPty, type Pty } from "../lib/exec/mod.ts";
import { shoalArgv } from "../tests/shell/_tmux.ts";

const SAMPLES = Number(Deno.args[0] ?? 60);
const dec = new TextDecoder();

const state = await Deno.makeTempDir({ prefix: "shoal-bench-shell-" });
const env: Record<string, string> = {
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  HOME: state,
  XDG_STATE_HOME: state,
  XDG_CONFIG_HOME: state,
  TERM: "xterm-256color",
  NO_COLOR: "1",
  DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
};

/** A terminal we read: everything the program wrote, and a way to wait for text in it. */
class Screen {
  text = "";
  /** Stamped lines (see STAMPER): index → ms from the program's write to their arrival. */
  stamps = new Map<number, number>();
  #scanned = 0;
  #wake: (() => void) | null = null;
  constructor(readonly pty: Pty) {
    (async () => {
      const buf = new Uint8Array(65536);
      for (;;) {
        const n = await pty.read(buf).catch(() => 0);
        if (n === 0) break;
        const nowNs = (performance.timeOrigin + performance.now()) * 1e6;
        this.text += dec.decode(buf.subarray(0, n), { stream: true });
        const re = /stamp (\d+) (\d+)\r*\n/g;
        re.lastIndex = this.#scanned;
        for (let m = re.exec(this.text); m !== null; m = re.exec(this.text)) {
          if (!this.stamps.has(Number(m[1]))) {
            this.stamps.set(Number(m[1]), (nowNs - Number(m[2])) / 1e6);
          }
          this.#scanned = re.lastIndex;
        }
        this.#wake?.();
      }
    })();
  }
  /** Wait until `test` holds on the text after `from`; returns the time it first held (ms). */
  async until(from: number, test: (s: string) => boolean, ms = 20_000): Promise<number> {
    const end = performance.now() + ms;
    while (!test(this.text.slice(from))) {
      if (performance.now() > end) throw new Error(`timed out; screen: ${this.text.slice(-400)}`);
      await new Promise<void>((r) => {
        this.#wake = r;
        setTimeout(r, 50);
      });
      this.#wake = null;
    }
    return performance.now();
  }
}

function start(argv: string[]): Screen {
  return new Screen(openPty({ argv, cwd: state, env, cols: 120, rows: 40 }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function p90(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length * 0.9)];
}

/** Type one key `SAMPLES` times; ms from the write to its echo. */
async function echoLatency(scr: Screen): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const from = scr.text.length;
    const t0 = performance.now();
    await scr.pty.write("x");
    const t1 = await scr.until(from, (s) => s.includes("x"));
    out.push(t1 - t0);
    await new Promise((r) => setTimeout(r, 5));
  }
  return out;
}

/** A program that writes `SAMPLES` stamped lines; ms from each write to its arrival here. */
const STAMPER = `import time,sys
for i in range(${SAMPLES}):
    sys.stdout.write("stamp %d %d\\n" % (i, time.time_ns())); sys.stdout.flush(); time.sleep(0.02)
`;

async function writeLatency(scr: Screen, launch: string): Promise<number[]> {
  scr.stamps.clear();
  if (launch !== "") await scr.pty.write(launch);
  // The arrival is taken when the bytes are read (wall clock, as the program stamps them).
  await scr.until(0, () => scr.stamps.size >= SAMPLES, 60_000).catch((e) => {
    throw new Error(`${scr.stamps.size} of ${SAMPLES} stamps: ${e.message}`);
  });
  return [...scr.stamps.values()];
}

const report = (name: string, xs: number[]) =>
  console.log(
    `${name.padEnd(44)} median ${median(xs).toFixed(2)} ms  p90 ${p90(xs).toFixed(2)} ms`,
  );

// ---- 1. keystroke → echo --------------------------------------------------------------------
const repl = start(shoalArgv());
await repl.until(0, (s) => / > $/m.test(s) || s.includes(" > "), 30_000);
const replEcho = await echoLatency(repl);
const cat = start(["script", "-q", "-c", "cat", "/dev/null"]);
await new Promise((r) => setTimeout(r, 500));
const scriptEcho = await echoLatency(cat);
report("keystroke → echo, shoal REPL", replEcho);
report("keystroke → echo, script -q -c cat", scriptEcho);
console.log(
  `ratio keystroke→echo shoal/script: ${(median(replEcho) / median(scriptEcho)).toFixed(2)}`,
);
await cat.pty.close();

// ---- 2. child write → terminal --------------------------------------------------------------
await Deno.writeTextFile(`${state}/stamper.py`, STAMPER);
await repl.pty.write("\x15"); // clear the typed x's (Ctrl-U)
await new Promise((r) => setTimeout(r, 200));
const viaTee = await writeLatency(repl, `python3 ${state}/stamper.py\r`);
const scr = start(["script", "-q", "-c", `python3 ${state}/stamper.py`, "/dev/null"]);
const viaScript = await writeLatency(scr, "");
report("child write → terminal, shoal PtyTee", viaTee);
report("child write → terminal, script -q", viaScript);
console.log(
  `ratio child-write→terminal shoal/script: ${(median(viaTee) / median(viaScript)).toFixed(2)}`,
);
await scr.pty.close();
await repl.pty.close();
await Deno.remove(state, { recursive: true }).catch(() => {});
Deno.exit(0);
