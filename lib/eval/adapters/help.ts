/**
 * `help HEAD` for an adapted tool: what each call returns and which flags it takes, from the
 * adapter spec itself (never a second list). Flags it does not declare run the plain tool.
 *
 * @module
 */

import { flagSpelling } from "./bind.ts";
import type { AdapterSpec, CallSpec } from "./schema.ts";

function returns(call: CallSpec): string {
  const o = call.output;
  if (o.parse === "none") return "an outcome (text output)";
  const hint = typeText(call);
  return hint === null ? `a value (${o.parse} output parsed)` : hint;
}

/** The declared `output.type` as written, from the parsed hint (null: none declared). */
function typeText(call: CallSpec): string | null {
  const h = call.output.hint;
  if (h === null) return null;
  if (h.k === "table" || h.k === "record") {
    const fields = h.fields?.map((f) => f.name).join(", ");
    return fields ? `${h.k} (${fields})` : h.k;
  }
  return h.k === "list" ? "list" : h.name;
}

function flags(call: CallSpec): string {
  if (call.params === null) return "any (forwarded unchecked)";
  const short = new Map([...call.short].map(([c, name]) => [name, c]));
  const out: string[] = [];
  for (const [name, p] of call.params) {
    if (call.positional.includes(name)) continue;
    const s = short.get(name);
    const spell = (s ? `-${s}/` : "") + flagSpelling(name);
    out.push(p.base === "bool" ? spell : `${spell} ${p.text.replace(/\?$/, "")}`);
  }
  const pos = call.positional.map((n) => `<${n}>`).join(" ");
  return [pos, ...out].filter((x) => x !== "").join("  ") || "none";
}

/** The help text of one adapted head. */
export function adapterHelp(spec: AdapterSpec): string {
  const lines = [
    `${spec.head} — adapted: its results are values, not text (runs ${spec.bin}; ` +
    `${spec.class})`,
  ];
  const calls: CallSpec[] = spec.subs.size > 0 ? [...spec.subs.values()] : [spec.top];
  if (spec.subs.size > 0 && spec.top.output.parse !== "none") calls.unshift(spec.top);
  for (const c of calls) {
    lines.push(`  ${c.label}  →  ${returns(c)}`, `      flags: ${flags(c)}`);
  }
  lines.push(
    `Other subcommands, and flags not listed, run plain ${spec.head} (its own text output); ` +
      `^${spec.head} always does.`,
  );
  return lines.join("\n");
}
