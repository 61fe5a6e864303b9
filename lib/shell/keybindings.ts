/**
 * `editor.keybindings` (subsystems §11): chords (`ctrl-r`, `alt-enter`, `ctrl+shift+up`, a
 * single character) mapped to a curated set of editor actions. A chord or action the editor
 * does not know is a start-up warning and is skipped; the rest take precedence over the
 * built-in keys.
 *
 * @module
 */

/** The actions a chord can name. */
export const ACTIONS = [
  "history_search",
  "clear_screen",
  "complete",
  "insert_newline",
  "submit",
  "clear_line",
  "cancel_line",
  "move_line_start",
  "move_line_end",
  "delete_word_backward",
  "history_previous",
  "history_next",
] as const;

/** One action name. */
export type Action = typeof ACTIONS[number];

/** A key as readline reports it. */
export interface KeyEvent {
  name?: string;
  ctrl?: boolean;
  meta?: boolean;
  shift?: boolean;
}

interface Chord {
  ctrl: boolean;
  meta: boolean;
  shift: boolean;
  name: string;
}

const NAMED = new Set([
  "tab",
  "enter",
  "return",
  "escape",
  "backspace",
  "delete",
  "up",
  "down",
  "left",
  "right",
  "home",
  "end",
  "pageup",
  "pagedown",
  "insert",
  "space",
  ...Array.from({ length: 12 }, (_, i) => `f${i + 1}`),
]);

/** Parse `ctrl-r` / `alt+enter` / `x`; null when it is not a chord. */
export function parseChord(text: string): Chord | null {
  const parts = text.toLowerCase().split(/[-+](?=.)/);
  const c: Chord = { ctrl: false, meta: false, shift: false, name: "" };
  for (const p of parts.slice(0, -1)) {
    if (p === "ctrl" || p === "control") c.ctrl = true;
    else if (["alt", "option", "meta", "super", "cmd", "command"].includes(p)) c.meta = true;
    else if (p === "shift") c.shift = true;
    else return null;
  }
  let key = parts[parts.length - 1];
  if (key === "enter") key = "return";
  if (key === "esc") key = "escape";
  if (!NAMED.has(key) && [...key].length !== 1) return null;
  c.name = key;
  return c;
}

/** The parsed bindings and the warnings for the ones skipped. */
export function parseBindings(
  table: Record<string, string>,
): { bindings: { chord: Chord; action: Action }[]; warnings: string[] } {
  const bindings: { chord: Chord; action: Action }[] = [];
  const warnings: string[] = [];
  for (const [chord, action] of Object.entries(table)) {
    const c = parseChord(chord);
    if (c === null) {
      warnings.push(`editor.keybindings: unknown chord ${JSON.stringify(chord)} (skipped)`);
      continue;
    }
    if (!(ACTIONS as readonly string[]).includes(action)) {
      warnings.push(
        `editor.keybindings.${chord}: unknown action ${JSON.stringify(action)} (one of ${
          ACTIONS.join(", ")
        })`,
      );
      continue;
    }
    bindings.push({ chord: c, action: action as Action });
  }
  return { bindings, warnings };
}

/** The action bound to `key`, if any. */
export function boundAction(
  bindings: { chord: Chord; action: Action }[],
  s: string | undefined,
  key: KeyEvent | undefined,
): Action | null {
  const name = key?.name ?? (s !== undefined && [...s].length === 1 ? s.toLowerCase() : "");
  for (const b of bindings) {
    const c = b.chord;
    if (
      c.name === name && c.ctrl === !!key?.ctrl && c.meta === !!key?.meta &&
      (c.shift === !!key?.shift || [...c.name].length === 1)
    ) return b.action;
  }
  return null;
}
