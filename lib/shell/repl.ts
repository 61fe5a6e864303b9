/**
 * The interactive loop shared by the local REPL (`shoal`) and `shoal attach`: prompt, line
 * editor, history, and a backend that runs each submission and prints what it made.
 *
 * @module
 */

import { parse, ParseError } from "../syntax/mod.ts";
import { configuredStateDir, type ShoalConfig } from "../config/mod.ts";
import { colorSupported, Terminal } from "./terminal.ts";
import { History, historyPath } from "./history.ts";
import { type Completer, LineEditor } from "./line_editor.ts";
import { renderPrompt } from "./prompt.ts";
import { writeFd } from "./foreground_pipe.ts";
import { cliConfig } from "./batch.ts";

const enc = new TextEncoder();

/** What runs the submissions: the in-process evaluator, or a kernel session. */
export interface ReplBackend {
  /** Run one submission and print its output; resolves with the status for the prompt. */
  run(src: string): Promise<number>;
  complete: Completer;
  /** The session cwd (prompt). */
  cwd(): string;
  /** `exit N` was evaluated: the status to leave with. */
  exitCode(): number | null;
  /** Jobs parked with Ctrl-Z (prompt). */
  jobCount(): number;
  /** Lines to show before the next prompt (a background job finished…). */
  notices(): string[];
  /** Attach mode: the session name, shown in the prompt. */
  session?: string;
  /** The editor exists: the backend may print above the prompt from now on. */
  bind?(editor: LineEditor): void;
  /** End (jobs, connections). */
  close(): Promise<void>;
}

/** True when `src` fails to parse only because it ends too early (an open block or string). */
export function incomplete(src: string): boolean {
  try {
    parse(src, { repl: true });
    return false;
  } catch (e) {
    if (!(e instanceof ParseError)) return false;
    return /found Eof|end of input/i.test(e.msg) ||
      (/^unterminated/.test(e.msg) && !/newline/.test(e.msg)) ||
      /\\\s*$/.test(src) || /(?:[,([{]|\|\||&&|[-+*/=<>]|\bthen|\belse)\s*$/.test(src);
  }
}

/** The REPL's settings from the configuration. */
export function replSettings(config: ShoalConfig, env: Record<string, string>) {
  return {
    color: colorSupported(config.render.color, env),
    historyFile: historyPath(config.history.path, configuredStateDir(config)),
  };
}

function say(text: string): void {
  try {
    writeFd(Deno.stdout, enc.encode(text));
  } catch { /* gone */ }
}

/** Run the loop until Ctrl-D, `exit` or the terminal closes; returns the exit status. */
export async function replLoop(
  backend: ReplBackend,
  config: ShoalConfig,
  env: Record<string, string>,
): Promise<number> {
  const term = Terminal.shared();
  const s = replSettings(config, env);
  const history = new History({ ...config.history, path: s.historyFile });
  if (history.problem) console.error(`shoal: warning: history: ${history.problem}`);
  if (config.editor.mode === "vi") {
    console.error(
      'shoal: warning: editor.mode = "vi" is not available in this line editor (node:readline ' +
        "has Emacs keys only); using emacs",
    );
  }
  term.setRaw(true);
  const editor = new LineEditor({
    terminal: term,
    history,
    complete: backend.complete,
    incomplete,
    bracketedPaste: config.editor.bracketed_paste,
    maxListed: config.completion.max_results,
    menu: config.completion.menu,
    keybindings: config.editor.keybindings,
    warn: (m) => console.error(`shoal: warning: ${m}`),
  });
  backend.bind?.(editor);
  let status = 0;
  try {
    for (;;) {
      for (const n of backend.notices()) say(n + "\n");
      const prompt = renderPrompt(config.prompt.template, {
        cwd: backend.cwd(),
        home: env.HOME,
        status,
        jobs: backend.jobCount(),
        session: backend.session,
        color: s.color,
      });
      const line = await editor.read(prompt);
      if (line === null) break;
      if (line.trim() === "") continue;
      editor.remember(line);
      status = await backend.run(line);
      const code = backend.exitCode();
      if (code !== null) return code;
    }
    say("\n");
    return 0;
  } finally {
    await backend.close();
    term.restore();
  }
}

/** `shoal` at a terminal: the local REPL. */
export async function replMain(_opts: Record<string, never>): Promise<number> {
  const cwd = Deno.cwd();
  const env = Deno.env.toObject();
  const config = cliConfig(cwd, env);
  if (config === null) return 2;
  const { localBackend } = await import("./local_backend.ts");
  const backend = await localBackend(config, cwd, env);
  if (typeof backend === "number") return backend;
  return await replLoop(backend, config, env);
}
