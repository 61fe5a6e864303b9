/**
 * The kernel's method table (protocol §3–§10, §13): attachment, session views, parse and
 * completion, exec with tasks, value.get, task control and events. Handlers validate params
 * (`-32602` with a message that names the field) and route work to session hosts; they own no
 * language logic.
 */

import { RPC, RpcError } from "../client/errors.ts";
import { type AttachResult, STATIC_CHANNELS } from "../client/protocol.ts";
import { parse, ParseError } from "../syntax/mod.ts";
import { ELIDE_DEFAULTS, type ElideSpec } from "../value/elide.ts";
import type { ConnState, Method, Methods } from "./connection.ts";
import type { EventBus, Subscription } from "./event_bus.ts";
import type { SessionHost } from "./session_host.ts";
import type { Task, TaskRegistry } from "./tasks.ts";
import { complete } from "./complete.ts";
import { availableTier } from "./tier.ts";
import type { KernelJournal } from "./kernel_journal.ts";
import { addJournalMethods } from "./methods_journal.ts";

/** One connection's attachment. */
export interface Attachment {
  session: SessionHost;
  principal: string;
  tty: boolean;
  kind: string;
}

/** What the method handlers need from the kernel. */
export interface KernelServices {
  bus: EventBus;
  tasks: TaskRegistry;
  /** The journal and content store (null: this kernel keeps none). (issue 7) */
  journal?: KernelJournal | null;
  /** The named session, created (and started) on first use. */
  session(name: string): Promise<SessionHost>;
  /** Tasks that may wait per session (default `MAX_QUEUED`). */
  maxQueued?: number;
  /** Connections currently open (debug counters). */
  stats(): Record<string, number>;
}

type Conn = ConnState<Attachment>;
type P = Record<string, unknown>;

const invalid = (msg: string, data?: unknown) => new RpcError(RPC.INVALID_PARAMS, msg, data);

function optString(p: P, key: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw invalid(`\`${key}\` must be a string`);
  return v;
}

function reqString(p: P, key: string, method: string): string {
  const v = optString(p, key);
  if (v === undefined) throw invalid(`${method} requires \`${key}\` (a string)`);
  return v;
}

function optUint(p: P, key: string): number | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw invalid(`\`${key}\` must be a non-negative integer`);
  }
  return v;
}

function optBool(p: P, key: string): boolean | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw invalid(`\`${key}\` must be a boolean`);
  return v;
}

function optElide(p: P): ElideSpec | null {
  const v = p.elide;
  if (v === undefined || v === null) return null;
  if (typeof v !== "object" || Array.isArray(v)) {
    throw invalid("`elide` must be an object {max_bytes?, max_rows?, max_items?}");
  }
  const e = v as P;
  const out: ElideSpec = {};
  for (const k of ["max_bytes", "max_rows", "max_items"] as const) {
    const n = optUint(e, k);
    if (n !== undefined) out[k] = n;
  }
  return out;
}

/** Largest client-published event payload (compact JSON characters). */
export const MAX_PAYLOAD = 65536;
/** Subscriptions one connection may hold. */
export const MAX_SUBSCRIPTIONS = 256;

/** Tasks that may wait behind a session's running one (D-31: bounded queues). */
export const MAX_QUEUED = 10_000;

/** Session names: the same alphabet as socket names, a little longer. */
const SESSION_NAME = /^[A-Za-z0-9._-]{1,128}$/;

const sleep = (ms: number) =>
  new Promise<"timeout">((r) => {
    const id = setTimeout(() => r("timeout"), ms);
    Deno.unrefTimer(id);
  });

function att(conn: Conn): Attachment {
  return conn.attachment!;
}

function inlineOrThrow(t: Task): unknown {
  const r = t.takeResult();
  if (r) return r;
  const e = t.error ?? { code: RPC.INTERNAL_ERROR, message: "task ended without a result" };
  throw new RpcError(e.code, e.message, e.data);
}

function taskOf(k: KernelServices, p: P, conn: Conn, method: string): Task {
  const ref = reqString(p, "task", method);
  const t = k.tasks.get(ref, att(conn).session.name);
  if (!t) throw new RpcError(RPC.UNKNOWN_TASK, "unknown task", { task: ref });
  return t;
}

/** Per-connection subscriptions: channel → subscription (one per channel). */
const SUBS = new WeakMap<Conn, Map<string, { scope: string; sub: Subscription }>>();

function validChannel(p: P, method: string): string {
  const ch = reqString(p, "channel", method);
  if (ch === "" || ch.length > 256) throw invalid("`channel` must be 1–256 characters");
  return ch;
}

/** Build the method table. */
export function kernelMethods(k: KernelServices): Methods<Attachment> {
  const m: Methods<Attachment> = new Map();
  const liveSubs = new Set<Subscription>();
  const unsubscribe = (scope: string, channel: string, sub: Subscription) => {
    liveSubs.delete(sub);
    k.bus.unsubscribe(scope, channel, sub);
  };
  const add = (name: string, handler: Method<Attachment>["handler"], requiresAttach = true) =>
    m.set(name, { handler, requiresAttach });

  add("session.attach", async (p, conn) => {
    const name = optString(p, "session") ?? "default";
    if (!SESSION_NAME.test(name) || name === "." || name === "..") {
      throw invalid(
        `invalid session name ${JSON.stringify(name)}: use 1–128 letters, digits, '.', '_' or '-'`,
      );
    }
    if (optString(p, "token") !== undefined) {
      throw new RpcError(
        RPC.AUTH_FAILED,
        "bearer tokens unavailable: this kernel has no token store yet; attach without a token",
      );
    }
    const client = p.client;
    if (
      client !== undefined && client !== null &&
      (typeof client !== "object" || Array.isArray(client))
    ) {
      throw invalid("`client` must be an object {kind?, tty?}");
    }
    const c = (client ?? {}) as P;
    const kind = optString(c, "kind") ?? "";
    const tty = optBool(c, "tty") ?? false;
    const session = await k.session(name);
    const principal = `uid:${Deno.uid() ?? 0}`;
    conn.attachment = { session, principal, tty, kind };
    const result: AttachResult = {
      session: name,
      principal,
      caps: {
        enforced: false,
        tier: null,
        available_tier: availableTier(),
        policy_principal: principal,
        profile: "local-human",
        token_caps: [],
        opaque: "allow",
        note: "nothing is enforced yet: this kernel has no policy engine or sandbox; " +
          "every effect runs with the kernel's own permissions",
      },
      cwd: { display: session.facts.cwd },
      env_hash: session.facts.env_hash,
      ast_version: 2,
      caps_enforced: false,
      elide_defaults: { ...ELIDE_DEFAULTS },
      channels: [...STATIC_CHANNELS],
    };
    return result;
  }, false);

  add("session.env", (_p, conn) => att(conn).session.request("env", {}));

  add("session.reef", () => ({ active_scope: null, bindings: [] }));

  add("session.cwd", (_p, conn) => ({ display: att(conn).session.facts.cwd }));

  add("parse", (p, conn) => {
    const src = reqString(p, "src", "parse");
    const names = conn.attachment?.session.facts.names;
    try {
      const ast = parse(src, names ? bindingContext(names) : {});
      return { ast_version: 2, ast };
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      throw new RpcError(RPC.PARSE_ERROR, e.msg, {
        span: { start: e.span[0], end: e.span[1] },
        hint: e.hint,
      });
    }
  }, false);

  add("complete", (p, conn) => {
    const src = reqString(p, "src", "complete");
    const cursor = optUint(p, "cursor");
    return { candidates: complete(src, cursor, conn.attachment?.session.facts.names ?? null) };
  }, false);

  add("exec", async (p, conn) => {
    const src = reqString(p, "src", "exec");
    const mode = optString(p, "mode") ?? "run";
    if (mode === "plan" || mode === "approved") {
      throw new RpcError(
        RPC.METHOD_NOT_FOUND,
        `exec mode "${mode}" is not available yet: plans and approval arrive with the Leash ` +
          `issue; use mode "run"`,
        { mode },
      );
    }
    if (mode !== "run") throw invalid(`mode must be run, plan or approved (got ${mode})`);
    const position = optString(p, "position") ?? "stmt";
    if (position !== "stmt" && position !== "value") {
      throw invalid(`position must be stmt or value (got ${position})`);
    }
    const background = (optBool(p, "async") ?? false) || (optBool(p, "background") ?? false);
    const timeoutMs = optUint(p, "timeout_ms");
    const elide = optElide(p);
    const a = att(conn);
    const limit = k.maxQueued ?? MAX_QUEUED;
    if (a.session.queued >= limit) {
      throw new RpcError(
        RPC.INTERNAL_ERROR,
        `session "${a.session.name}" already has ${limit} tasks waiting; await or ` +
          `cancel some before queueing more`,
        { queued: a.session.queued, limit },
      );
    }
    const t = k.tasks.create(a.session.name, src, position, elide, a.tty);
    k.journal?.notePrincipal(t, a.principal); // the journal row's principal (issue 7)
    t.keepResult = !background; // nobody waits for an async task's inline result
    a.session.submit(t);
    const handle = { task: t.ref, events: t.channel };
    if (background) return handle;
    if (timeoutMs !== undefined) {
      const r = await Promise.race([t.done.then(() => "done" as const), sleep(timeoutMs)]);
      if (r === "timeout" && !t.finished) {
        t.keepResult = false;
        return { ...handle, timed_out: true };
      }
    } else await t.done;
    return inlineOrThrow(t);
  });

  add("value.get", (p, conn) => {
    const ref = reqString(p, "ref", "value.get");
    const path = optString(p, "path");
    let slice: [number, number] | undefined;
    if (p.slice !== undefined && p.slice !== null) {
      const s = p.slice;
      if (
        !Array.isArray(s) || s.length !== 2 ||
        !s.every((x) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0)
      ) {
        throw invalid("`slice` must be [start, end] with non-negative integers");
      }
      slice = [s[0], s[1]];
    }
    const format = optString(p, "format") ?? "json";
    if (format !== "json" && format !== "render" && format !== "raw") {
      throw invalid(`format must be json, render, or raw (got ${format})`);
    }
    const elide = optElide(p);
    const a = att(conn);
    return a.session.request("value.get", { ref, path, slice, format, elide, tty: a.tty });
  });

  add("task.list", (_p, conn) => k.tasks.list(att(conn).session.name).map((t) => t.record()));

  add("task.get", (p, conn) => taskOf(k, p, conn, "task.get").record());

  add("task.await", async (p, conn) => {
    const t = taskOf(k, p, conn, "task.await");
    const timeoutMs = optUint(p, "timeout_ms");
    // Bounded by the connection: a vanished client does not keep waiting.
    await untilClosed(
      conn,
      timeoutMs === undefined ? t.done : Promise.race([t.done, sleep(timeoutMs)]),
    );
    return t.finished ? t.record() : { ...t.record(), timed_out: true };
  });

  add("task.cancel", (p, conn) => {
    const t = taskOf(k, p, conn, "task.cancel");
    att(conn).session.cancel(t);
    return { task: t.ref, cancel_requested: true, state: t.state };
  });

  for (const verb of ["suspend", "resume"] as const) {
    add(`task.${verb}`, (p, conn) => {
      const t = taskOf(k, p, conn, `task.${verb}`);
      att(conn).session.suspendTask(t, verb === "suspend");
      return { task: t.ref, suspended: t.suspended, state: t.state };
    });
  }

  add("events.read", async (p, conn) => {
    const channel = validChannel(p, "events.read");
    const since = p.since === undefined || p.since === null ? null : optUint(p, "since")!;
    const limit = optUint(p, "limit");
    // Durable channels read from the journal what the ring does not hold (D-20).
    const events = await k.bus.history(att(conn).session.name, channel, since, limit ?? undefined);
    return { channel, events };
  });

  add("events.publish", (p, conn) => {
    const channel = validChannel(p, "events.publish");
    if (!channel.startsWith("user.") || channel.length <= 5) {
      throw invalid("only user.* channels may be published by clients", { channel });
    }
    const payload = p.payload === undefined ? null : p.payload;
    // The ring keeps 1,024 events per channel: a bounded payload keeps it bounded too.
    const len = JSON.stringify(payload).length;
    if (len > MAX_PAYLOAD) {
      throw invalid(
        `payload of ${len} bytes exceeds the ${MAX_PAYLOAD}-byte event limit; publish a ` +
          `reference (a path or out:N) instead`,
        { channel, len, limit: MAX_PAYLOAD },
      );
    }
    const s = att(conn).session;
    if (!s.admitUserChannel(channel)) {
      throw invalid(
        `session "${s.name}" already has ${s.userChannels.size} user.* channels (the limit); ` +
          `reuse one`,
        { channel, limit: s.userChannels.size },
      );
    }
    const e = k.bus.publish(s.name, channel, payload);
    s.inject(channel, payload);
    return { channel, seq: e.seq, ts: e.ts };
  });

  add("events.subscribe", (p, conn) => {
    const channel = validChannel(p, "events.subscribe");
    const since = p.since === undefined || p.since === null ? null : optUint(p, "since")!;
    const scope = att(conn).session.name;
    let subs = SUBS.get(conn);
    if (!subs) {
      const mine = new Map<string, { scope: string; sub: Subscription }>();
      SUBS.set(conn, mine);
      subs = mine;
      conn.cleanups.add(() => {
        for (const [ch, s] of mine) unsubscribe(s.scope, ch, s.sub);
        mine.clear();
      });
    }
    const old = subs.get(channel);
    if (old) unsubscribe(old.scope, channel, old.sub);
    else if (subs.size >= MAX_SUBSCRIPTIONS) {
      throw invalid(
        `this connection already has ${MAX_SUBSCRIPTIONS} subscriptions; unsubscribe first`,
        { limit: MAX_SUBSCRIPTIONS },
      );
    }
    const sub = k.bus.subscribe(
      scope,
      channel,
      since,
      (e) => conn.writer.send({ jsonrpc: "2.0", method: "event", params: e }),
    );
    liveSubs.add(sub);
    subs.set(channel, { scope, sub });
    return { channel, subscribed: true };
  });

  add("events.unsubscribe", (p, conn) => {
    const channel = validChannel(p, "events.unsubscribe");
    const s = SUBS.get(conn)?.get(channel);
    if (s) {
      unsubscribe(s.scope, channel, s.sub);
      SUBS.get(conn)!.delete(channel);
    }
    return { channel, subscribed: false, was_subscribed: s !== undefined };
  });

  addJournalMethods(m, k.journal ?? null); // blob.get, journal.query, journal.get (issue 7)

  // Diagnostics for tests and operators: live counters only, no session data.
  add("kernel.stats", () => ({ ...k.stats(), subscriptions: liveSubs.size }));

  return m;
}

/** Wait for `p`, or until the connection closes (the listener is always removed). */
async function untilClosed(conn: Conn, p: Promise<unknown>): Promise<void> {
  if (conn.closed.aborted) return;
  let onAbort!: () => void;
  const closed = new Promise<void>((r) => (onAbort = r));
  conn.closed.addEventListener("abort", onAbort, { once: true });
  try {
    await Promise.race([p, closed]);
  } finally {
    conn.closed.removeEventListener("abort", onAbort);
  }
}

/** Parser binding context from a session's root bindings. */
export function bindingContext(names: Record<string, string>) {
  const valueNames: string[] = [];
  const commandNames: string[] = [];
  for (const [n, t] of Object.entries(names)) {
    (t === "closure" || t === "command" ? commandNames : valueNames).push(n);
  }
  return { valueNames, commandNames };
}
