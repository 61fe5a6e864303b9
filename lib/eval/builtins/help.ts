/**
 * `help` (issue 13): `help` prints the agent primer (`docs/agent_primer.md`, the same file the
 * MCP server sends as its instructions), `help TOPIC` a builtin (usage, flags), a namespace
 * (`json`, `math`…), a type (`str`, `bytes`, `outcome`…: its methods) or a method name.
 * Every line comes from the tables dispatch itself uses (docs.ts), never a second list.
 *
 * @module
 */

import { adapterHelp } from "../adapters/help.ts";
import { fail } from "../../value/errors.ts";
import { TYPE_NAMES } from "../../syntax/parse_pattern.ts";
import type { TypeName } from "../../value/types.ts";
import { docOf } from "../docs.ts";
import { memberDocs } from "../dispatch.ts";
import { nearest } from "../errors.ts";
import { namespaceNames, namespaceTable } from "../namespaces/mod.ts";
import { flagUsage } from "./flags.ts";
import { CALL_FORMS, getBuiltin, registerBuiltin, registeredBuiltins } from "./registry.ts";
import { doc } from "../docs.ts";

const PRIMER_URL = new URL("../../../docs/agent_primer.md", import.meta.url);
let primer: string | null = null;

/** The primer text (read once; the compiled binaries include the file). */
export function primerText(): string {
  if (primer === null) {
    try {
      primer = Deno.readTextFileSync(PRIMER_URL);
    } catch (e) {
      throw fail(
        "io_error",
        `help: cannot read the primer (${PRIMER_URL.pathname}): ${(e as Error).message}`,
        "this build lacks docs/agent_primer.md; `help TOPIC` still works",
      );
    }
  }
  return primer;
}

/** Lines `  sig   about`, the signatures padded to one column. */
function columns(rows: { sig: string; about: string }[]): string {
  const w = Math.min(44, Math.max(0, ...rows.map((r) => r.sig.length)));
  return rows.map((r) => `  ${r.sig.padEnd(w)}  ${r.about}`.trimEnd()).join("\n");
}

function builtinHelp(name: string): string {
  const b = getBuiltin(name)!;
  const d = docOf(b);
  const out = [d ? `${d.sig}\n  ${d.about}` : name];
  if (b.flags !== undefined && b.flags.own.length > 0) {
    out.push("flags:\n" + columns(b.flags.own.map((f) => ({ sig: flagUsage(f), about: f.about }))));
  }
  const gnu = b.flags?.gnu;
  if (gnu !== undefined && (gnu.short !== "" || gnu.long.length > 0)) {
    const names = [
      ...[...gnu.short].map((c) => `-${c}`),
      ...gnu.long.map((l) => `--${l.replaceAll("_", "-")}`),
    ];
    out.push(`other GNU ${name} flags run the system's ${name} (text output): ${names.join(" ")}`);
  }
  if (b.flags?.refused !== undefined) {
    for (const [f, why] of Object.entries(b.flags.refused)) out.push(`${f}: ${why}`);
  }
  if (b.structured) out.push("returns an outcome; its .out is the value above");
  return out.join("\n");
}

function namespaceHelp(name: string): string {
  const ns = namespaceTable(name)!;
  const rows = [...ns.functions].map(([m, f]) => {
    const d = docOf(f);
    return { sig: d?.sig ?? `${name}.${m}(…)`, about: d?.about ?? "" };
  });
  const consts = [...(ns.constants?.keys() ?? [])].map((c) => `${name}.${c}`);
  return `${name} namespace:\n${columns(rows)}` +
    (consts.length ? `\nconstants: ${consts.join(", ")}` : "");
}

function typeHelp(t: TypeName): string {
  const rows = memberDocs(t);
  const head = t === "outcome"
    ? "outcome (what every command returns); other methods apply to its .out:"
    : `${t} methods and fields:`;
  return rows.length ? `${head}\n${columns(rows)}` : `${t} has no methods of its own`;
}

/** Which types have a method or field `name`. */
function methodHelp(name: string): string | null {
  const rows: { sig: string; about: string }[] = [];
  for (const t of TYPE_NAMES) {
    const m = memberDocs(t as TypeName).find((r) => r.name === name);
    if (m !== undefined && !rows.some((r) => r.sig === `${t}${m.sig}`)) {
      rows.push({ sig: `${t}${m.sig}`, about: m.about });
    }
  }
  return rows.length ? columns(rows) : null;
}

function topics(): { builtins: string[]; namespaces: string[]; types: string[]; forms: string[] } {
  return {
    builtins: registeredBuiltins().filter((n) => docOf(getBuiltin(n)!) !== undefined).sort(),
    namespaces: namespaceNames(),
    types: [...TYPE_NAMES],
    forms: [...CALL_FORMS.keys()].filter((n) => docOf(CALL_FORMS.get(n)!) !== undefined).sort(),
  };
}

/** The text of `help` (no topic: the primer) or `help TOPIC`; not_found for an unknown one. */
export function helpText(topic: string | null = null): string {
  if (topic === null) return primerText();
  const t = topic.replace(/^\./, "").replace(/\(\)$/, "");
  if (getBuiltin(t) !== undefined) {
    const form = CALL_FORMS.get(t);
    const fd = form && docOf(form);
    return builtinHelp(t) + (fd ? `\nas a call:\n${columns([fd])}` : "");
  }
  if (namespaceTable(t) !== undefined) return namespaceHelp(t);
  if (TYPE_NAMES.has(t)) return typeHelp(t as TypeName);
  const form = CALL_FORMS.get(t);
  const fd = form && docOf(form);
  if (fd) return columns([fd]);
  const m = methodHelp(t);
  if (m !== null) return `.${t} is a method of:\n${m}`;
  const all = topics();
  const near = nearest(t, [...all.builtins, ...all.namespaces, ...all.types, ...all.forms]);
  throw fail(
    "not_found",
    `help: no topic \`${topic}\``,
    (near ? `did you mean \`help ${near}\`? ` : "") +
      `topics: commands (${all.builtins.join(" ")}); namespaces (${all.namespaces.join(" ")}); ` +
      `types (${all.types.join(" ")}); or a method name; x.methods() lists any value's methods`,
  );
}

registerBuiltin(
  "help",
  doc(
    "help [TOPIC]",
    "the Shoal primer; or a command, namespace, type or method (help ls, help json, help str)",
    {
      structured: true,
      run(ctx, args) {
        if (args.pos.length > 1 || args.flags.size > 0) {
          throw fail("arg_error", "help takes at most one topic", "e.g. help str", args.span);
        }
        const v = args.pos[0];
        const topic = v === undefined ? null : typeof v === "string" ? v : String(v);
        // An adapted tool (`help git`) is a topic of this session's catalog.
        const adapted = topic === null || getBuiltin(topic)
          ? undefined
          : ctx.ev.adapters().get(topic);
        if (adapted !== undefined) return adapterHelp(adapted);
        return helpText(topic);
      },
    },
  ),
);
