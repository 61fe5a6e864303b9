/**
 * A real terminal for shell tests: tmux on a private server socket, a temp HOME / state /
 * config, `send-keys` to type and `capture-pane` to read the screen.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
/** Repo paths. */
export const MAIN = root("main.ts");
export const CONFIG = root("deno.json");

/** Deno's cache directory (kept when a test gives a child a fresh HOME). */
export const DENO_DIR: string = Deno.env.get("DENO_DIR") ??
  join(Deno.env.get("XDG_CACHE_HOME") ?? join(Deno.env.get("HOME") ?? "/root", ".cache"), "deno");

/** argv that runs `shoal ARGS` from source (the `shoal` task's flags). */
export function shoalArgv(args: string[] = []): string[] {
  return [Deno.execPath(), "run", "-A", "--unstable-worker-options", "--config", CONFIG, MAIN]
    .concat(args);
}

/** The same as one shell command line. */
export function shoalCommand(args: string[] = []): string {
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  return shoalArgv(args).map(q).join(" ");
}

/** True when tmux is installed (CI installs it through .ci/run). */
export function haveTmux(): boolean {
  try {
    return new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let counter = 0;

/** One tmux server with one window running a command. */
export class Tmux {
  /** The tmux server's socket name (a fresh one after each `kill`). */
  socket: string;
  readonly dir: string;
  readonly home: string;
  readonly env: Record<string, string>;

  private constructor(dir: string) {
    this.dir = dir;
    this.socket = `shoal-test-${Deno.pid}-${counter++}`;
    this.home = join(dir, "home");
    this.env = {
      HOME: this.home,
      XDG_STATE_HOME: join(dir, "state"),
      XDG_CONFIG_HOME: join(dir, "config"),
      XDG_RUNTIME_DIR: join(dir, "run"),
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      TERM: "xterm-256color",
      LANG: "C.UTF-8",
      // Deno's own caches stay where they are (no downloads in tests).
      DENO_DIR,
    };
  }

  /** A fresh temp dir (HOME, state, config, runtime dir) and no server yet: see `spawn`. */
  static async create(env: Record<string, string> = {}): Promise<Tmux> {
    const dir = await Deno.makeTempDir({ prefix: "shoal-tmux-" });
    const t = new Tmux(dir);
    Object.assign(t.env, env);
    await Deno.mkdir(t.home, { recursive: true });
    await Deno.mkdir(t.env.XDG_RUNTIME_DIR, { recursive: true, mode: 0o700 });
    // Panes stay after their program exits, so its last screen can be read.
    await Deno.writeTextFile(join(dir, "tmux.conf"), "set -g remain-on-exit on\n");
    return t;
  }

  /** Start (or, after `kill`, restart) the server with one window running `command`. */
  async spawn(command: string, opts: { cols?: number; rows?: number; cwd?: string } = {}) {
    const envArgs = Object.entries(this.env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    await this.tmux([
      "new-session",
      "-d",
      "-s",
      "t",
      "-x",
      String(opts.cols ?? 100),
      "-y",
      String(opts.rows ?? 30),
      "-c",
      opts.cwd ?? this.dir,
      ...envArgs,
      command,
    ]);
  }

  async tmux(args: string[]): Promise<string> {
    const out = await new Deno.Command("tmux", {
      args: ["-L", this.socket, "-f", join(this.dir, "tmux.conf"), ...args],
      stdout: "piped",
      stderr: "piped",
      env: this.env,
    }).output();
    if (!out.success) {
      throw new Error(`tmux ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
    }
    return new TextDecoder().decode(out.stdout);
  }

  /** Type keys (tmux key names: Enter, C-c, Tab, Up, Escape…). */
  async send(...keys: string[]): Promise<void> {
    await this.tmux(["send-keys", "-t", "t", ...keys]);
  }

  /** Type literal text. */
  async type(text: string): Promise<void> {
    await this.tmux(["send-keys", "-t", "t", "-l", text]);
  }

  /** The visible screen (plus `history` lines of scrollback). */
  async screen(history = 0): Promise<string> {
    return await this.tmux(["capture-pane", "-t", "t", "-p", "-S", String(-history)]);
  }

  /** Wait until the screen matches `re`; returns the screen. Throws with the screen on time-out. */
  async waitFor(re: RegExp, ms = 15_000, history = 200): Promise<string> {
    const end = Date.now() + ms;
    let s = "";
    while (Date.now() < end) {
      s = await this.screen(history);
      if (re.test(s)) return s;
      await sleep(50);
    }
    throw new Error(`timed out waiting for ${re} on screen:\n${s}`);
  }

  /** The pane's program pid (the shell or shoal). */
  async panePid(): Promise<number> {
    return Number((await this.tmux(["display-message", "-p", "-t", "t", "#{pane_pid}"])).trim());
  }

  /** End the window (and the server); a later `spawn` starts a new server. */
  async kill(): Promise<void> {
    await this.tmux(["kill-server"]).catch(() => {});
    // A server that is still going down must not meet the next new-session.
    this.socket = `shoal-test-${Deno.pid}-${counter++}`;
  }

  /** End everything and remove the temp dir. */
  async close(): Promise<void> {
    await this.kill();
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}

/**
 * pids of live processes whose command line contains `needle` (argv joined by spaces); with
 * `exact`, whose argv is exactly that (so a shell or `shoal -c` mentioning it does not count).
 */
export function pidsMatching(needle: string, exact = false): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const raw = Deno.readTextFileSync(`/proc/${e.name}/cmdline`);
      const cmd = raw.replace(/\0$/, "").replaceAll("\0", " ");
      if (exact ? cmd === needle : cmd.includes(needle)) out.push(Number(e.name));
    } catch { /* gone */ }
  }
  return out;
}
