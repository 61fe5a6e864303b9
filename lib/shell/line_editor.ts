/**
 * The REPL's line editor, on `node:readline` (built into Deno: no native build, no download).
 * readline brings the Emacs keys (Ctrl-A/E/K/U/W/Y, Alt-B/F, undo), history with Up/Down
 * (filtered by what is typed), Ctrl-L, Ctrl-D, wide characters and window resizes; this module
 * adds what a shell needs on top, at the keypress level:
 *
 * - Enter on an unfinished program (an open `{`, `(`, `[` or string) inserts a newline instead
 *   of submitting, so the buffer holds the whole multi-line entry (Alt-Enter always does);
 * - bracketed paste: pasted text is inserted as is, newlines included, and never runs by itself;
 * - Ctrl-R reverse incremental search over the history (Ctrl-R again: older; Enter: run;
 *   Esc/arrows: edit; Ctrl-G/Ctrl-C: cancel);
 * - Tab completion from the language's completion engine (the kernel's `complete`): a single
 *   candidate replaces the word, several insert their common prefix, a second Tab lists them;
 * - Ctrl-C clears the line (`^C`) instead of ending anything; Ctrl-Z at the prompt is ignored.
 *
 * Why readline over the alternatives: it is in the runtime (nothing to install, works in a
 * compiled binary), its editing keys are the ones people know from bash/node, and its
 * rendering handles wide characters and wrapping. npm line editors either wrap readline
 * (readline-ui, readline-vim), pull in a terminal toolkit with its own input model
 * (terminal-kit, blessed) or draw a prompt widget rather than edit a shell line (enquirer,
 * inquirer). Vi mode is the one thing readline lacks (see the note on `editor.mode`).
 *
 * @module
 */

import { createInterface, type Interface } from "node:readline";
import { PassThrough, Writable } from "node:stream";
import type { Terminal } from "./terminal.ts";
import type { History } from "./history.ts";
import type { Completion } from "../eval/complete.ts";
import { type Action, boundAction, parseBindings } from "./keybindings.ts";
import { writeFd } from "./foreground_pipe.ts";

/** Completion: candidates and the UTF-8 byte offset of the text they replace. */
export type Completer = (
  src: string,
  cursorByte: number,
) => Completion | Promise<Completion>;

/** What the editor needs. */
export interface LineEditorOptions {
  terminal: Terminal;
  history: History;
  complete: Completer;
  /** True when `src` is an unfinished program that continues on the next line. */
  incomplete: (src: string) => boolean;
  /** Turn on the terminal's bracketed paste (`editor.bracketed_paste`). */
  bracketedPaste: boolean;
  /** Most candidates listed under the line. */
  maxListed?: number;
  /** `completion.menu`: list ambiguous candidates at the first Tab (else at the second). */
  menu?: boolean;
  /** `editor.keybindings` (chord → action); bad entries are reported through `warn`. */
  keybindings?: Record<string, string>;
  warn?: (msg: string) => void;
}

/** readline's internals this module drives (stable since Node 10; also in Deno's port). */
interface RlInternals extends Interface {
  line: string;
  cursor: number;
  prevRows: number;
  history: string[];
  _ttyWrite(s: string | undefined, key: Key | undefined): void;
  _refreshLine(): void;
  _insertString(s: string): void;
  _addHistory(): string;
}

interface Key {
  sequence?: string;
  name?: string;
  ctrl?: boolean;
  meta?: boolean;
  shift?: boolean;
  code?: string;
}

const enc = new TextEncoder();

/** UTF-8 byte length of a string. */
function bytes(s: string): number {
  return enc.encode(s).length;
}

/** The JS string index of UTF-8 byte offset `b` in `s`. */
function indexOfByte(s: string, b: number): number {
  let n = 0;
  let i = 0;
  for (const ch of s) {
    if (n >= b) break;
    n += bytes(ch);
    i += ch.length;
  }
  return i;
}

function commonPrefix(xs: string[]): string {
  if (xs.length === 0) return "";
  let p = xs[0];
  for (const x of xs) while (!x.startsWith(p)) p = p.slice(0, -1);
  return p;
}

/** The editor (one per REPL; see the module comment). */
export class LineEditor {
  readonly #rl: RlInternals;
  readonly #input: PassThrough;
  readonly #output: Writable;
  readonly #o: LineEditorOptions;
  #pending: ((line: string | null) => void) | null = null;
  /** Lines readline finished while nobody was reading (the rest of a typed-ahead chunk). */
  #queued: (string | null)[] = [];
  #closed = false;
  #prompt = "";
  #lastTab = false;
  #tabs: Promise<void> = Promise.resolve();
  /** Bracketed paste: null, or the text collected so far (`skip` eats the marker's `~`). */
  #paste: { text: string; skip: boolean; ending: boolean } | null = null;
  #search: { query: string; at: number; saved: string; savedCursor: number } | null = null;
  readonly #bindings: ReturnType<typeof parseBindings>["bindings"];

  constructor(o: LineEditorOptions) {
    this.#o = o;
    const kb = parseBindings(o.keybindings ?? {});
    for (const w of kb.warnings) o.warn?.(w);
    this.#bindings = kb.bindings;
    const input = new PassThrough();
    Object.assign(input, { isTTY: true, setRawMode: () => input });
    const output = new Writable({
      write(chunk, _e, cb) {
        try {
          writeFd(Deno.stdout, typeof chunk === "string" ? enc.encode(chunk) : chunk);
        } catch { /* the terminal is gone */ }
        cb();
      },
    });
    Object.defineProperty(output, "columns", { get: () => o.terminal.size().cols });
    Object.defineProperty(output, "rows", { get: () => o.terminal.size().rows });
    Object.assign(output, { isTTY: true });
    o.terminal.onResize(() => output.emit("resize"));
    this.#input = input;
    this.#output = output;
    const rl = createInterface({
      input,
      output,
      terminal: true,
      historySize: o.history.opts.max_entries,
      removeHistoryDuplicates: false,
      tabSize: 2,
    }) as unknown as RlInternals;
    rl.history = o.history.entries.slice().reverse();
    // History is kept by History (its rules, its file): readline only recalls it.
    rl._addHistory = function (this: RlInternals) {
      return this.line;
    };
    const ttyWrite = rl._ttyWrite.bind(rl);
    rl._ttyWrite = (s, key) => this.#key(s, key, ttyWrite);
    rl.on("line", (line: string) => this.#settle(line));
    rl.on("close", () => {
      this.#closed = true;
      this.#settle(null);
    });
    // Handled in #key; a listener stops readline from closing or suspending the process.
    rl.on("SIGINT", () => {});
    rl.on("SIGTSTP", () => {});
    this.#rl = rl;
    if (o.bracketedPaste) {
      this.#write("\x1b[?2004h");
      o.terminal.atRestore(() => this.#write("\x1b[?2004l"));
    }
  }

  #write(s: string): void {
    try {
      writeFd(Deno.stdout, enc.encode(s));
    } catch { /* gone */ }
  }

  #settle(line: string | null): void {
    const p = this.#pending;
    this.#pending = null;
    this.#o.terminal.route(null);
    if (p === null) {
      if (this.#queued.length < 64) this.#queued.push(line);
      return;
    }
    p(line);
  }

  /**
   * Read one entry after `prompt`: its text (newlines kept), or null at end of input
   * (Ctrl-D on an empty line, or the terminal closed).
   */
  read(prompt: string, initial = ""): Promise<string | null> {
    if (this.#queued.length) return Promise.resolve(this.#queued.shift()!);
    if (this.#closed) return Promise.resolve(null);
    this.#prompt = prompt;
    return new Promise((resolve) => {
      this.#pending = resolve;
      const rl = this.#rl;
      rl.setPrompt(prompt);
      // Text typed ahead of this prompt stays in the buffer.
      if (rl.line === "") {
        rl.line = initial;
        rl.cursor = initial.length;
      }
      rl.prevRows = 0;
      this.#write("\r\x1b[K");
      rl.prompt(true);
      this.#o.terminal.route((b) => this.#input.write(b));
    });
  }

  /** Record an accepted entry in the recall list (History applies its rules first). */
  remember(entry: string): void {
    if (this.#o.history.add(entry)) this.#rl.history.unshift(entry);
  }

  /** Print `text` above the prompt while an entry is being edited (agent activity). */
  printAbove(text: string): void {
    if (this.#pending === null) {
      this.#write(text.endsWith("\n") ? text : text + "\n");
      return;
    }
    this.#write("\r\x1b[J" + text.replaceAll("\n", "\r\n") + (text.endsWith("\n") ? "" : "\r\n"));
    this.#rl.prevRows = 0;
    this.#rl._refreshLine();
  }

  #key(s: string | undefined, key: Key | undefined, orig: (s?: string, k?: Key) => void): void {
    const rl = this.#rl;
    if (this.#paste !== null || key?.code === "[200" || key?.name === "paste-start") {
      return this.#pasteKey(s, key);
    }
    if (this.#search !== null) return this.#searchKey(s, key, orig);
    const action = this.#bindings.length ? boundAction(this.#bindings, s, key) : null;
    if (action !== null) return this.#act(action, orig);
    const tab = key?.name === "tab" && !key.shift && !key.ctrl && !key.meta;
    const wasTab = this.#lastTab;
    this.#lastTab = tab;
    if (tab) return this.#queueTab(wasTab);
    if (key?.ctrl && key.name === "r") return this.#startSearch();
    if (key?.ctrl && key.name === "c") return this.#act("cancel_line", orig);
    if (key?.ctrl && key.name === "z") return;
    if (key?.name === "return" || key?.name === "enter") {
      if (key.meta || (rl.line.trim() !== "" && this.#o.incomplete(rl.line))) {
        rl._insertString("\n");
        return;
      }
    }
    orig(s, key);
  }

  /** Run an editor action (built-in keys and `editor.keybindings` both end up here). */
  #act(a: Action, orig: (s?: string, k?: Key) => void): void {
    const rl = this.#rl;
    switch (a) {
      case "history_search":
        return this.#startSearch();
      case "clear_screen":
        return orig("\f", { name: "l", ctrl: true });
      case "complete":
        this.#lastTab = true;
        return this.#queueTab(true);
      case "insert_newline":
        return rl._insertString("\n");
      case "submit":
        return orig("\r", { name: "return" });
      case "clear_line":
        rl.line = "";
        rl.cursor = 0;
        return rl._refreshLine();
      case "cancel_line":
        this.#write("^C\r\n");
        rl.line = "";
        rl.cursor = 0;
        rl.prevRows = 0;
        return rl.prompt(true);
      case "move_line_start":
        return orig("\x01", { name: "a", ctrl: true });
      case "move_line_end":
        return orig("\x05", { name: "e", ctrl: true });
      case "delete_word_backward":
        return orig("\x17", { name: "w", ctrl: true });
      case "history_previous":
        return orig(undefined, { name: "up" });
      case "history_next":
        return orig(undefined, { name: "down" });
    }
  }

  #pasteKey(s: string | undefined, key: Key | undefined): void {
    if (this.#paste === null) {
      this.#paste = { text: "", skip: key?.code === "[200", ending: false };
      return;
    }
    const p = this.#paste;
    if (p.skip && s === "~") {
      p.skip = false;
      if (p.ending) this.#endPaste();
      return;
    }
    p.skip = false;
    if (key?.code === "[201" || key?.name === "paste-end") {
      p.ending = true;
      p.skip = key?.code === "[201";
      if (!p.skip) this.#endPaste();
      return;
    }
    const t = s ?? key?.sequence ?? "";
    p.text += t === "\r" ? "\n" : t;
  }

  #endPaste(): void {
    const text = this.#paste!.text.replace(/\r\n?/g, "\n");
    this.#paste = null;
    if (text !== "") this.#rl._insertString(text);
  }

  /** Tabs run one after another: a second Tab acts on what the first one inserted. */
  #queueTab(again: boolean): void {
    this.#tabs = this.#tabs.then(() => this.#tab(again)).catch(() => {});
  }

  async #tab(again: boolean): Promise<void> {
    const rl = this.#rl;
    const line = rl.line;
    const cursor = rl.cursor;
    let r;
    try {
      r = await this.#o.complete(line, bytes(line.slice(0, cursor)));
    } catch {
      return;
    }
    // The person typed on meanwhile: this answer is for a line that no longer exists.
    if (rl.line !== line || rl.cursor !== cursor) return;
    const start = indexOfByte(line, r.from);
    const word = line.slice(start, cursor);
    const cands = r.candidates;
    if (cands.length === 0) return;
    const replace = (text: string) => {
      rl.line = line.slice(0, start) + text + line.slice(cursor);
      rl.cursor = start + text.length;
      rl._refreshLine();
    };
    if (cands.length === 1) {
      // A complete file name is followed by a space, as in every shell; names and directories
      // are not (a `.method` or `/more` follows).
      const c = cands[0];
      const file = r.kind === "path" && !c.endsWith("/") && line[cursor] !== " ";
      replace(file ? c + " " : c);
      return;
    }
    const common = commonPrefix(cands);
    if (common.length > word.length && common.startsWith(word)) {
      replace(common);
      this.#lastTab = true;
      return;
    }
    if (!again && !this.#o.menu && cands.length > 1) {
      this.#lastTab = true;
      return;
    }
    this.#list(cands);
  }

  #list(cands: string[]): void {
    const max = this.#o.maxListed ?? 100;
    const shown = cands.slice(0, max);
    const cols = this.#o.terminal.size().cols;
    const w = Math.min(Math.max(...shown.map((c) => c.length)) + 2, cols);
    const per = Math.max(1, Math.floor(cols / w));
    const rows: string[] = [];
    for (let i = 0; i < shown.length; i += per) {
      rows.push(shown.slice(i, i + per).map((c) => c.padEnd(w)).join("").trimEnd());
    }
    if (cands.length > shown.length) rows.push(`… ${cands.length - shown.length} more`);
    this.#write("\r\n" + rows.join("\r\n") + "\r\n");
    this.#rl.prevRows = 0;
    this.#rl._refreshLine();
  }

  // ---- Ctrl-R ----------------------------------------------------------------------------

  #startSearch(): void {
    const rl = this.#rl;
    this.#search = { query: "", at: -1, saved: rl.line, savedCursor: rl.cursor };
    this.#showSearch(rl.line, false);
  }

  /** Find `query` in the history from index `from` (older entries have higher indexes). */
  #find(query: string, from: number): number {
    const h = this.#rl.history;
    for (let i = Math.max(0, from); i < h.length; i++) if (h[i].includes(query)) return i;
    return -1;
  }

  #showSearch(text: string, failed: boolean): void {
    const s = this.#search!;
    const rl = this.#rl;
    rl.setPrompt(`(${failed ? "failed " : ""}reverse-i-search)'${s.query}': `);
    rl.line = text;
    const hit = s.query === "" ? -1 : text.indexOf(s.query);
    rl.cursor = hit < 0 ? text.length : hit;
    rl._refreshLine();
  }

  #endSearch(keep: boolean): void {
    const s = this.#search!;
    const rl = this.#rl;
    this.#search = null;
    rl.setPrompt(this.#prompt);
    if (!keep) {
      rl.line = s.saved;
      rl.cursor = s.savedCursor;
    } else rl.cursor = rl.line.length; // ready to edit at the end, as fish and zsh do
    rl._refreshLine();
  }

  #searchKey(s: string | undefined, key: Key | undefined, orig: (s?: string, k?: Key) => void) {
    const st = this.#search!;
    const h = this.#rl.history;
    if (key?.ctrl && key.name === "r") {
      const i = this.#find(st.query, st.at + 1);
      if (i >= 0) st.at = i;
      this.#showSearch(i >= 0 ? h[i] : this.#rl.line, i < 0);
      return;
    }
    if (key?.ctrl && (key.name === "g" || key.name === "c")) return this.#endSearch(false);
    if (key?.name === "backspace") {
      st.query = st.query.slice(0, -1);
      const i = st.query === "" ? -1 : this.#find(st.query, 0);
      st.at = i;
      this.#showSearch(i >= 0 ? h[i] : st.saved, false);
      return;
    }
    if (key?.name === "return" || key?.name === "enter") {
      this.#endSearch(true);
      orig(s, key);
      return;
    }
    const printable = s !== undefined && s.length > 0 && !key?.ctrl && !key?.meta &&
      s >= " " && key?.name !== "escape";
    if (printable) {
      st.query += s;
      const i = this.#find(st.query, Math.max(0, st.at));
      if (i >= 0) st.at = i;
      this.#showSearch(i >= 0 ? h[i] : this.#rl.line, i < 0);
      return;
    }
    // Any other key (Esc, arrows, Ctrl-A/E…) keeps the match for editing.
    this.#endSearch(true);
    if (key?.name !== "escape") orig(s, key);
  }
}
