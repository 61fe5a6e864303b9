/**
 * MCP resources (protocol §15.5–§15.7): the six roots plus live task/plan/PTY entries, the nine
 * URI templates, and `resources/read` mapped onto kernel calls with the §15.7 envelope. Kernel
 * errors surface as JSON-RPC errors with the kernel's code and data (the caller maps them).
 *
 * Array-valued kernel answers are wrapped so `structuredContent` is always an object:
 * `shoal://journal` → `{entries}`, `shoal://jobs` → `{tasks}` (like `shoal_journal`).
 */

import type { TaskRecord } from "../client/mod.ts";
import type { KernelLink } from "./kernel_link.ts";
import { PRIMER_URI, primerText } from "./primer.ts";
import { readEnvelope } from "./result.ts";
import { ptyFrame } from "./pty_frame.ts";
import {
  BadUri,
  parseInt64,
  parseShoalUri,
  parseSlice,
  parseUint,
  type ShoalUri,
  taskNumber,
} from "./uri.ts";

type Obj = Record<string, unknown>;
const JSON_MIME = "application/json";

/** The six roots, always listed first. */
export const ROOTS: Obj[] = [
  ["shoal://journal", "journal", "structured journal of executions (query parameters filter)"],
  ["shoal://jobs", "jobs", "the session's tasks (running and recent)"],
  ["shoal://session/cwd", "cwd", "the session's current directory (live)"],
  ["shoal://session/env", "env", "environment names; values only when policy grants env_read"],
  ["shoal://session/reef", "reef", "active Reef scope and tool bindings"],
  ["shoal://pty", "pty", "open PTY summaries (read shoal://pty/{id} for a screen)"],
].map(([uri, name, description]) => ({ uri, name, description, mimeType: JSON_MIME }));

/** The nine templates. */
export const TEMPLATES: Obj[] = [
  [
    "shoal://out/{n}{?path,slice,format}",
    "transcript-value",
    "a transcript value; path selects, slice=a..b pages, format=json|render|raw",
  ],
  ["shoal://val/{hash}", "content-value", "a content-addressed value (blake3 hash)"],
  ["shoal://task/{id}", "task", "a task record (subscribable)"],
  [
    "shoal://task/{id}/out{?path,slice,format}",
    "task-output",
    "a finished task's value, else its record (subscribable)",
  ],
  ["shoal://plan/{ref}", "plan", "a stored plan: effects, reversibility, verdict, approval"],
  ["shoal://session/{view}", "session-view", "cwd, env or reef"],
  ["shoal://pty/{id}", "pty-screen", "a PTY's screen and cursor (subscribable: screen changes)"],
  [
    "shoal://journal{?since,until,head,principal,ok,effects,limit}",
    "journal",
    "journal rows; since/until in ns, effects comma-separated",
  ],
  [
    "shoal://events/{channel}{?since,limit}",
    "events",
    "events of a channel after the since cursor (subscribable)",
  ],
].map(([uriTemplate, name, description]) => ({
  uriTemplate,
  name,
  description,
  mimeType: JSON_MIME,
}));

/** The agent primer, listed after the roots. */
export const PRIMER_RESOURCE: Obj = {
  uri: PRIMER_URI,
  name: "primer",
  title: "Shoal primer for agents",
  description: "how Shoal runs commands, what they return, and bash → Shoal (the instructions)",
  mimeType: "text/markdown",
};

/** resources/list: the roots, the primer, then live tasks, plans and PTYs (failed lookups are
 * skipped). */
export async function listResources(link: KernelLink): Promise<Obj[]> {
  const quiet = <T>(p: Promise<T>) => p.catch(() => null);
  const [tasks, plans, ptys] = await Promise.all([
    quiet(link.call<TaskRecord[]>("task.list")),
    link.missing.has("plan.list") ? null : quiet(link.call<Obj[]>("plan.list")),
    link.missing.has("pty.list") ? null : quiet(link.call<{ ptys: Obj[] }>("pty.list")),
  ]);
  const out = [...ROOTS, PRIMER_RESOURCE];
  for (const t of Array.isArray(tasks) ? tasks : []) {
    const n = taskNumber(String(t.task));
    if (n === null) continue;
    out.push({
      uri: `shoal://task/${n}`,
      name: t.task,
      description: `task ${t.state}`,
      mimeType: JSON_MIME,
    });
  }
  for (const p of Array.isArray(plans) ? plans : []) {
    const ref = String(p.plan_ref ?? "");
    if (!ref.startsWith("plan:")) continue;
    out.push({
      uri: `shoal://plan/${ref.slice(5)}`,
      name: ref,
      description: `plan (${p.verdict ?? "unknown verdict"})`,
      mimeType: JSON_MIME,
    });
  }
  for (const p of Array.isArray(ptys?.ptys) ? ptys!.ptys : []) {
    const id = String(p.pty_id ?? "");
    if (!id.startsWith("pty:")) continue;
    out.push({
      uri: `shoal://pty/${id.slice(4)}`,
      name: id,
      description: `pty running ${p.cmd ?? "?"}`,
      mimeType: JSON_MIME,
    });
  }
  return out;
}

/** `value.get` params from a transcript URI's query. */
function valueParams(ref: string, u: ShoalUri): Obj {
  const p: Obj = { ref };
  const path = u.query.get("path");
  if (path !== undefined && path !== "") p.path = path;
  const slice = parseSlice(u.query.get("slice"));
  if (slice) p.slice = slice;
  const format = u.query.get("format");
  if (format !== undefined && format !== "") p.format = format;
  const elide = u.query.get("elide"); // unadvertised: percent-encoded JSON
  if (elide !== undefined) {
    try {
      const e = JSON.parse(elide);
      if (e && typeof e === "object" && !Array.isArray(e)) p.elide = e;
    } catch { /* unparseable: dropped (§15.6) */ }
  }
  return p;
}

const withPrefix = (prefix: string, id: string) => (id.startsWith(prefix) ? id : prefix + id);

/** The kernel result behind a URI (array answers wrapped into objects). */
async function readKernel(link: KernelLink, u: ShoalUri): Promise<unknown> {
  const one = (what: string) => {
    if (u.segs.length !== 1) throw new BadUri(`expected shoal://${u.root}/{${what}}`);
    return u.segs[0];
  };
  switch (u.root) {
    case "out":
      return await link.call("value.get", valueParams(`out:${one("n")}`, u));
    case "val":
      return await link.call("blob.get", { hash: one("hash").replace(/^blake3:/, "") });
    case "task": {
      if (u.segs.length < 1 || u.segs.length > 2 || (u.segs.length === 2 && u.segs[1] !== "out")) {
        throw new BadUri("expected shoal://task/{id} or shoal://task/{id}/out");
      }
      const n = taskNumber(u.segs[0]);
      if (n === null) throw new BadUri(`not a task id: ${u.segs[0]}`);
      const rec = await link.call<TaskRecord>("task.get", { task: `task:${n}` });
      if (u.segs.length === 1 || !rec.result_ref) return rec; // still running: the record
      return await link.call("value.get", valueParams(rec.result_ref, u));
    }
    case "plan":
      return await link.call("plan.get", { plan_ref: withPrefix("plan:", one("ref")) });
    case "session": {
      const view = one("view");
      if (view === "cwd") return await link.call("session.cwd");
      if (view === "env") return await link.call("session.env");
      if (view === "reef") return await link.call("session.reef");
      throw new BadUri(`unsupported session view ${JSON.stringify(view)} (cwd, env or reef)`);
    }
    case "pty":
      if (u.segs.length === 0) {
        // A kernel without PTY support has no PTYs: an honest empty list, not an error.
        if (link.missing.has("pty.list")) return { ptys: [] };
        return await link.call("pty.list");
      }
      return await link.call("pty.read", { pty_id: withPrefix("pty:", one("id")) });
    case "jobs":
      if (u.segs.length) throw new BadUri("expected shoal://jobs");
      return { tasks: await link.call("task.list") };
    case "journal": {
      if (u.segs.length) throw new BadUri("expected shoal://journal{?…}");
      const q: Obj = {};
      const since = parseInt64(u.query.get("since"));
      if (since !== undefined) q.since = since;
      const until = parseInt64(u.query.get("until"));
      if (until !== undefined) q.until = until;
      for (const k of ["head", "principal"]) {
        const v = u.query.get(k);
        if (v !== undefined && v !== "") q[k] = v;
      }
      const ok = u.query.get("ok");
      if (ok === "true" || ok === "false") q.ok = ok === "true";
      const effects = u.query.get("effects");
      if (effects) q.effects = effects.split(",").filter((e) => e !== "");
      const limit = parseUint(u.query.get("limit"));
      if (limit !== undefined) q.limit = limit;
      return { entries: await link.call("journal.query", q) };
    }
    case "events": {
      const q: Obj = { channel: one("channel") };
      const since = parseUint(u.query.get("since"));
      if (since !== undefined) q.since = since;
      const limit = parseUint(u.query.get("limit"));
      if (limit !== undefined) q.limit = limit;
      return await link.call("events.read", q);
    }
    default:
      throw new BadUri(`unsupported resource root ${JSON.stringify(u.root)}`);
  }
}

/** resources/read: the §15.7 envelope. Throws BadUri, RpcError (kernel) or TransportError. */
export async function readResource(link: KernelLink, uri: string): Promise<Obj> {
  const u = parseShoalUri(uri);
  if (u.root === "docs") {
    if (u.segs.length !== 1 || u.segs[0] !== "primer") throw new BadUri(`expected ${PRIMER_URI}`);
    return { contents: [{ uri, mimeType: "text/markdown", text: await primerText() }] };
  }
  const result = await readKernel(link, u);
  if (u.root === "pty" && u.segs.length === 1) {
    // A screen reads as the framed screen (text/plain); the structured result rides along.
    return {
      contents: [{ uri, mimeType: "text/plain", text: ptyFrame(result as Obj) }],
      structuredContent: result,
    };
  }
  return readEnvelope(uri, result);
}
