/**
 * The agent trial's numbers: per task and in total, for each server that has a trial
 * directory — calls, failed calls, output characters, whether the answer was judged right, and
 * for Shoal how many calls ran natively and how many through `sh { … }`.
 *
 *   deno run -A bench/agent_trial/summary.ts [shoal] [bash]     (default: both)
 *
 * @module
 */

import { join } from "node:path";
import type { CallRecord } from "./hub.ts";
import { type ServerName, SERVERS, trialDirs } from "./servers.ts";
import { TASKS } from "./tasks.ts";

interface Answer {
  task: string;
  ok: boolean;
  why: string;
}

interface Row {
  calls: number;
  failed: number;
  chars: number;
  native: number;
  sh: number;
  solved: boolean | null;
}

async function lines<T>(path: string): Promise<T[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as T);
}

/** Per-task rows of one server's trial (`null` key: calls outside any task). */
export async function summarize(server: ServerName): Promise<Map<string, Row> | null> {
  const { dir } = trialDirs(server);
  if (!(await Deno.stat(dir).then(() => true, () => false))) return null;
  const calls = await lines<CallRecord>(join(dir, "calls.jsonl"));
  const answers = await lines<Answer>(join(dir, "answers.jsonl"));
  const rows = new Map<string, Row>();
  const row = (task: string) => {
    let r = rows.get(task);
    if (!r) rows.set(task, r = { calls: 0, failed: 0, chars: 0, native: 0, sh: 0, solved: null });
    return r;
  };
  for (const c of calls) {
    const r = row(c.task ?? "(none)");
    r.calls++;
    if (c.failed) r.failed++;
    r.chars += c.chars;
    if (c.form === "native") r.native++;
    if (c.form === "sh") r.sh++;
  }
  for (const a of answers) row(a.task).solved = a.ok; // the last answer counts
  return rows;
}

const pad = (s: string | number, n: number) => String(s).padStart(n);

function form(r: Row): string {
  if (r.native + r.sh === 0) return "";
  if (r.sh === 0) return "native";
  if (r.native === 0) return "sh";
  return `mixed (${r.native} native, ${r.sh} sh)`;
}

function print(server: ServerName, rows: Map<string, Row>): Row {
  console.log(`\n## ${server}\n`);
  console.log("task   calls  failed  chars  solved  form   kind");
  const total: Row = { calls: 0, failed: 0, chars: 0, native: 0, sh: 0, solved: null };
  let solved = 0;
  const ids = [
    ...TASKS.map((t) => t.id),
    ...[...rows.keys()].filter((k) => !TASKS.some((t) => t.id === k)),
  ];
  for (const id of ids) {
    const r = rows.get(id);
    if (!r) continue;
    const kind = TASKS.find((t) => t.id === id)?.kind ?? "";
    const ok = r.solved === null ? "-" : r.solved ? "yes" : "NO";
    console.log(
      `${id.padEnd(6)}${pad(r.calls, 6)}${pad(r.failed, 8)}${pad(r.chars, 7)}  ${ok.padEnd(6)}  ` +
        `${(server === "shoal" ? form(r) : "").padEnd(6)} ${kind}`,
    );
    total.calls += r.calls;
    total.failed += r.failed;
    total.chars += r.chars;
    total.native += r.native;
    total.sh += r.sh;
    if (r.solved) solved++;
  }
  console.log(
    `total ${pad(total.calls, 6)}${pad(total.failed, 8)}${pad(total.chars, 7)}  ${solved} solved` +
      (server === "shoal" ? `  (${total.native} native calls, ${total.sh} through sh)` : ""),
  );
  return total;
}

if (import.meta.main) {
  const wanted = (Deno.args.length ? Deno.args : SERVERS) as ServerName[];
  const totals = new Map<ServerName, Row>();
  for (const s of wanted) {
    const rows = await summarize(s);
    if (rows === null) {
      console.log(`\n## ${s}\n\n(no trial in ${trialDirs(s).dir})`);
      continue;
    }
    totals.set(s, print(s, rows));
  }
  const a = totals.get("shoal"), b = totals.get("bash");
  if (a && b && b.calls > 0) {
    const ratio = (
      x: number,
      y: number,
    ) => (y === 0 ? (x === 0 ? "1.00" : "∞") : (x / y).toFixed(2));
    console.log(
      `\nshoal / bash: calls ${ratio(a.calls, b.calls)}×, failed ${ratio(a.failed, b.failed)}×, ` +
        `characters ${ratio(a.chars, b.chars)}×`,
    );
  }
}
