/**
 * The facade's link to the kernel: one attached request connection (many calls in flight at
 * once), reconnected — and the kernel autostarted again — on the next call after it drops; a
 * second attached connection for event subscriptions (it resumes its channels from their
 * cursors after a reconnect); and a probe of which optional kernel methods exist.
 */

import {
  type AttachParams,
  type AttachResult,
  ConnectionClosed,
  KernelClient,
  RPC,
  RpcError,
} from "../client/mod.ts";
import { ensureKernel } from "../client/autostart.ts";
import { processCwd } from "../client/process_cwd.ts";
import type { McpConfig } from "./config.ts";

/** The kernel could not be reached (answered as JSON-RPC -32603, D-26). */
export class TransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TransportError";
  }
}

/** What the agent is told in its next result after the session restarted under it. */
export interface RestartNotice {
  session: string;
  message: string;
  lost_values: { from: string; to: string } | null;
  lost_tasks: { from: string; to: string } | null;
}

/** The directory the host launched this facade in (null: it no longer exists). */
const launchDir = processCwd();

/** Kernel methods some tools depend on that a kernel may not implement yet. */
export const OPTIONAL_METHODS = ["plan.list", "plan.apply", "cap.request", "pty.list"] as const;

/** A link to the kernel. */
export class KernelLink {
  #client: KernelClient | null = null;
  #connecting: Promise<KernelClient> | null = null;
  #events: Promise<KernelClient> | null = null;
  #closed = false;
  /** Methods the kernel answered with -32601 at probe time. */
  readonly missing = new Set<string>();
  /** The pid of a kernel this facade started (null when it found one running). */
  startedPid: number | null = null;

  constructor(readonly cfg: McpConfig, readonly log: (msg: string) => void) {}

  /** The attach params: same session/token on every connection. */
  get attachParams(): AttachParams {
    return {
      session: this.cfg.session,
      ...(this.cfg.token ? { token: this.cfg.token } : {}),
      client: { kind: "mcp", tty: false },
      // A session this facade creates starts in the host's project (where it launched us).
      ...(launchDir === null ? {} : { cwd: launchDir }),
    };
  }

  /** The attach result of the request connection (after `client()`). */
  get attached(): AttachResult | null {
    return this.#client?.attached ?? null;
  }

  async #connect(reconnect: boolean): Promise<KernelClient> {
    const r = await ensureKernel(this.cfg.socket, {
      autostart: this.cfg.autostart,
      log: this.log,
      stateDir: this.cfg.stateDir,
    });
    if (r.started) this.startedPid = r.pid ?? null;
    return await KernelClient.connect({
      socket: this.cfg.socket,
      attach: this.attachParams,
      reconnect,
      onError: (e) => this.log(`kernel connection: ${(e as Error)?.message ?? e}`),
    });
  }

  /** The attached request connection, (re)connecting when needed. */
  client(): Promise<KernelClient> {
    if (this.#closed) return Promise.reject(new TransportError("shoal-mcp is shutting down"));
    const c = this.#client;
    if (c && c.connected) return Promise.resolve(c);
    this.#connecting ??= this.#connect(false).then((k) => {
      this.#client?.close();
      this.#client = k;
      this.#attachedTo(k.attached);
      return k;
    }).finally(() => (this.#connecting = null));
    return this.#connecting;
  }

  /** The session transcript attached to (`AttachResult.instance`), and refs seen under it. */
  #instance: string | null = null;
  #seen = { out: 0, task: 0 };
  #restart: RestartNotice | null = null;

  /** A (re)attach: a transcript other than the last one means its refs are gone. */
  #attachedTo(a: AttachResult | null): void {
    const now = a?.instance ?? null;
    const before = this.#instance;
    this.#instance = now;
    if (before === null || now === null || now === before) return;
    const seen = this.#seen;
    this.#seen = { out: 0, task: 0 };
    const gone = [
      seen.out > 0 ? (seen.out === 1 ? "out:1" : `out:1…out:${seen.out}`) : null,
      seen.task > 0 ? (seen.task === 1 ? "task:1" : `task:1…task:${seen.task}`) : null,
    ].filter((x): x is string => x !== null);
    const message = `The Shoal session "${this.cfg.session}" restarted (its kernel was lost and ` +
      `a new one attached): ${
        gone.length ? `${gone.join(" and ")} from before are gone` : "nothing from before remains"
      }` +
      `; values, variables and the working directory start afresh. A ref from before may now ` +
      `name a new value: use only refs returned after this message.`;
    this.#restart = {
      session: this.cfg.session,
      message,
      lost_values: seen.out > 0 ? { from: "out:1", to: `out:${seen.out}` } : null,
      lost_tasks: seen.task > 0 ? { from: "task:1", to: `task:${seen.task}` } : null,
    };
    this.log(message);
  }

  /** Refs a kernel result hands out (the highest of each kind, for a restart notice). */
  #note(result: unknown): void {
    if (result === null || typeof result !== "object") return;
    const r = result as Record<string, unknown>;
    for (const k of ["ref", "result_ref"]) {
      const m = typeof r[k] === "string" ? /^out:([0-9]+)$/.exec(r[k] as string) : null;
      if (m) this.#seen.out = Math.max(this.#seen.out, Number(m[1]));
    }
    const t = typeof r.task === "string" ? /^task:([0-9]+)$/.exec(r.task) : null;
    if (t) this.#seen.task = Math.max(this.#seen.task, Number(t[1]));
  }

  /** The restart notice not yet shown to the agent (once), or null. */
  takeRestartNotice(): RestartNotice | null {
    const n = this.#restart;
    this.#restart = null;
    return n;
  }

  /** Call a kernel method. Throws RpcError (a kernel answer) or TransportError. */
  async call<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    let k: KernelClient;
    try {
      k = await this.client();
    } catch (e) {
      if (e instanceof RpcError || e instanceof TransportError) throw e;
      throw new TransportError(`cannot reach the kernel: ${(e as Error).message}`);
    }
    try {
      const r = await k.call<T>(method, params);
      this.#note(r);
      return r;
    } catch (e) {
      if (e instanceof RpcError) this.#note(e.data); // a raised error's value is out:N too
      if (e instanceof ConnectionClosed) {
        throw new TransportError(
          `kernel connection lost during ${method}; the next call reconnects (a running exec ` +
            `keeps running in the kernel: list tasks with resources/read shoal://jobs)`,
        );
      }
      throw e;
    }
  }

  #approver: Promise<KernelClient> | null = null;

  /** Can this facade approve plans in the host (an approver other than the agent itself)? */
  get canApprove(): boolean {
    const a = this.cfg.approver;
    if (a === null) return false;
    // Never the agent's own identity: a tokenless agent is the person already.
    return a.kind === "local" ? this.cfg.token !== null : a.token !== this.cfg.token;
  }

  /**
   * The approver's connection (issue 15), opened on first use: attached as the person
   * (`--approver local`) or with the approver's bearer — never the agent's token.
   */
  approver(): Promise<KernelClient> {
    const a = this.cfg.approver;
    if (a === null || !this.canApprove) {
      return Promise.reject(new TransportError("no approver is configured for this facade"));
    }
    // A connection lost with a kernel restart is opened again.
    const open = this.#approver;
    if (open) {
      return open.then((c) => {
        if (c.connected) return c;
        this.#approver = null;
        return this.approver();
      });
    }
    this.#approver = KernelClient.connect({
      socket: this.cfg.socket,
      attach: {
        session: this.cfg.session,
        ...(a.kind === "token" ? { token: a.token } : {}),
        client: { kind: "mcp-approver", tty: false },
      },
    }).catch((e) => {
      this.#approver = null;
      if (e instanceof RpcError) throw e;
      throw new TransportError(`cannot open the approver's connection: ${(e as Error).message}`);
    });
    return this.#approver;
  }

  /** The events connection (opened on first use; it resumes its subscriptions by itself). */
  events(): Promise<KernelClient> {
    if (this.#closed) return Promise.reject(new TransportError("shoal-mcp is shutting down"));
    this.#events ??= this.#connect(true).catch((e) => {
      this.#events = null;
      throw new TransportError(`cannot open the kernel event connection: ${(e as Error).message}`);
    });
    return this.#events;
  }

  /** Probe the optional methods (harmless calls with no params; only -32601 means absent). */
  async probe(): Promise<void> {
    await Promise.all(OPTIONAL_METHODS.map(async (m) => {
      try {
        await this.call(m, {});
        this.missing.delete(m);
      } catch (e) {
        if (e instanceof RpcError && e.code === RPC.METHOD_NOT_FOUND) this.missing.add(m);
        else this.missing.delete(m);
      }
    }));
  }

  /** Close both connections. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#client?.close();
    const ev = this.#events;
    if (ev) (await ev.catch(() => null))?.close();
    const ap = this.#approver;
    if (ap) (await ap.catch(() => null))?.close();
  }
}
