/**
 * The kernel server: binds the socket (lib/kernel/listen.ts), accepts connections, routes
 * frames to the method table, and owns the named sessions (one process each), the task registry
 * and the event bus. `startKernel` returns a handle whose `close()` ends everything: sessions
 * cancel their work (child process groups get their kill ladder), session processes end, the
 * socket file goes away.
 *
 * @module
 */

import { ListenError, prepareKernelSocket } from "./listen.ts";
import { RPC, RpcError } from "../client/errors.ts";
import { serveConnection } from "./connection.ts";
import { EventBus } from "./event_bus.ts";
import { SessionHost } from "./session_host.ts";
import { processCwd, sessionStartCwd } from "./session_cwd.ts";
import { TaskRegistry } from "./tasks.ts";
import { type Attachment, kernelMethods } from "./methods/mod.ts";
import { KernelJournal } from "./kernel_journal.ts";
import { PtyRegistry } from "./pty_registry.ts";
import { KernelLeash } from "./leash_service.ts";
import {
  localPrincipal,
  policyPath,
  PolicySource,
  TokenStore,
  tokenStorePath,
} from "../leash/mod.ts";
import { emptySandboxSpec, type SandboxSpec } from "../exec/sandbox_spec.ts";
import { type QuotaLimits, Quotas } from "./quotas.ts";
import { DEFAULT_SESSION_MEMORY_MB } from "./session_process.ts";

/** Options of `startKernel`. */
export interface KernelOptions {
  /** The socket path (resolve discovery before calling). */
  socket: string;
  /** Session name used to name the socket (informational). */
  session?: string;
  /** State directory: journal (`journal.db`) and content store (`cas/`) live here. */
  stateDir?: string | null;
  /** Ephemeral kernel: an in-memory journal and a temp content store, no token store. */
  ephemeral?: boolean;
  /** False: no journal at all (benchmarks measure its cost). Default: on when a state dir is set or ephemeral. */
  journal?: boolean;
  /**
   * False: every exec goes through the kernel (benchmarks measure the difference). Default: an
   * unconfined session serves its attachments' plain execs on its own exec lane.
   */
  lane?: boolean;
  /** Size cap of `journal.db` (writes past it fail with `journal_full` and are reported). */
  journalMaxBytes?: number;
  /** Initial cwd of new sessions (default: the process cwd). */
  cwd?: string;
  /** Initial environment of new sessions (default: the process environment). */
  env?: Record<string, string>;
  /** Named sessions at most (default `MAX_SESSIONS`). */
  maxSessions?: number;
  /** Tasks waiting per session at most (default `MAX_QUEUED`). */
  maxQueued?: number;
  /** Finished tasks kept (default `MAX_FINISHED_TASKS`; tests lower it). */
  maxFinishedTasks?: number;
  /** Heap limit of each session process in MiB (default `DEFAULT_SESSION_MEMORY_MB`). */
  sessionMemoryMb?: number;
  /** Where connection-level faults are reported (default: stderr). */
  onError?: (e: unknown) => void;
  /** `--policy FILE` (issue 15); default `<state>/policy.toml` when it exists. */
  policy?: string | null;
  /** `--token-store FILE`; default `$SHOAL_TOKEN_STORE`, else `<state>/tokens.json`. */
  tokenStore?: string | null;
  /** Refuse attachments without a bearer token (D-15). */
  requireToken?: boolean;
  /** False: no Leash at all — no policy evaluation, plans or tokens (benchmark baseline). */
  leash?: boolean;
  /** `~` in policy grants (default: `$HOME`). */
  home?: string;
  /**
   * What a principal's sessions may touch (issue 16): each session of a principal for which
   * this returns a spec runs confined to it (Landlock, a socket filter, a private mount
   * namespace); null means unconfined — the permissive local human. Default: from the
   * principal's Leash policy (restricted ⇒ confined to it).
   */
  confinement?: (principal: string) => SandboxSpec | null;
  /** Per-principal quotas (D-31); unset ones keep `DEFAULT_QUOTAS`. */
  quotas?: Partial<QuotaLimits>;
}

/** Default bound on named sessions (each is a process). */
export const MAX_SESSIONS = 64;

/** The state directory cannot be used (the kernel refuses to start; nothing was bound). */
export class StateDirError extends Error {
  constructor(readonly dir: string, cause: unknown) {
    super(
      `cannot use the state directory ${dir}: ${(cause as Error)?.message ?? cause}; fix it, or ` +
        `choose another with --state-dir (or run --ephemeral)`,
    );
    this.name = "StateDirError";
  }
}

/** A running kernel. */
export interface KernelHandle {
  readonly path: string;
  readonly bus: EventBus;
  readonly tasks: TaskRegistry;
  /** Resolves when the accept loop has ended (after `close`). */
  readonly finished: Promise<void>;
  /** Stop accepting, cancel sessions' work, terminate workers, remove the socket. */
  close(): Promise<void>;
}

/** Bind and serve. Throws `ListenError` when the socket cannot be taken. */
export async function startKernel(opts: KernelOptions): Promise<KernelHandle> {
  const onError = opts.onError ?? ((e: unknown) => {
    console.error(`shoal-kernel: ${(e as Error)?.stack ?? e}`);
  });
  // Leash (issue 15): a missing or malformed policy file is fatal before the socket is taken.
  const stateDir = opts.ephemeral ? null : (opts.stateDir ?? null);
  const policySource = opts.leash === false ? null : PolicySource.open({
    ...policyPath({ explicit: opts.policy, stateDir }),
    local: localPrincipal(),
    home: opts.home ?? Deno.env.get("HOME") ?? "/",
  });
  const tokenPath = opts.leash === false
    ? null
    : tokenStorePath({ explicit: opts.tokenStore, stateDir });
  // The socket path is ours (lock held, directories checked) before the state directory is
  // touched, and nothing is bound until the journal opened: a state directory that cannot be
  // used fails start-up with no socket left behind (issue 19).
  const prepared = await prepareKernelSocket(opts.socket);
  // Journal (issue 7): durable channels, exec rows, blobs.
  let journal: KernelJournal | null = null;
  if (opts.journal !== false && (opts.ephemeral || opts.stateDir)) {
    try {
      journal = await KernelJournal.open(
        opts.stateDir ?? null,
        opts.ephemeral === true,
        onError,
        opts.journalMaxBytes === undefined ? {} : { maxDbBytes: opts.journalMaxBytes },
      );
    } catch (e) {
      prepared.abandon();
      throw new StateDirError(opts.stateDir ?? "(ephemeral)", e);
    }
  }
  let bound;
  try {
    bound = await prepared.bind();
  } catch (e) {
    await journal?.close().catch(() => {});
    throw e instanceof ListenError ? e : new ListenError(
      `cannot bind the socket ${prepared.path}: ${(e as Error)?.message ?? e}`,
    );
  }
  const bus = new EventBus(journal?.durable ?? null);
  if (journal) journal.bus = bus;
  // An evicted task takes its `task.N` channel with it, so the bus stays bounded too.
  const tasks = new TaskRegistry((t) => bus.drop(t.session, t.channel), opts.maxFinishedTasks);
  // `task.N` events live in the task records; the bus makes a channel only for subscribers.
  bus.derived = (scope, channel) => tasks.channelEvents(scope, channel);
  // Private to this kernel (0700): the cancel-slot files it shares with its sessions.
  const runDir = Deno.makeTempDirSync({ prefix: "shoal-kernel-" });
  // Where sessions start: the configured directory, else the kernel's own as it started.
  const startDir = opts.cwd ?? processCwd();
  const sessions = new Map<string, Promise<SessionHost>>();
  const hosts = new Set<SessionHost>();
  const quotas = new Quotas(opts.quotas);
  const leash = policySource === null ? null : new KernelLeash({
    source: policySource,
    maxPlansPerPrincipal: quotas.limits.plans,
    tokens: tokenPath === null ? null : new TokenStore(tokenPath),
    requireToken: opts.requireToken === true,
    bus,
    sessions: () => hosts,
    onError,
  });
  if (journal && leash) journal.access = (p) => leash.policies().journalAccess(p);
  // Confinement (issue 16): a principal whose policy restricts anything runs its sessions under
  // the OS sandbox lowered from it (its policy section is a sandbox spec as it is); one whose
  // policy allows everything (the person's built-in policy) runs unconfined.
  const confinement = opts.confinement ?? (leash === null ? undefined : (principal: string) => {
    const policy = leash.policies().compiled(principal);
    if (policy?.allowAll) return null;
    return policy?.spec ?? emptySandboxSpec(); // no section: everything denied, nothing granted
  });
  const conns = new Set<Deno.Conn>();
  let connectionsTotal = 0;
  let closing: Promise<void> | null = null;

  // Plans and PTYs are counted by their owners, with their limits from the one quota table.
  const ptys = new PtyRegistry(quotas.limits.ptys);
  const methods = kernelMethods({
    bus,
    tasks,
    ptys,
    quotas,
    maxQueued: opts.maxQueued,
    journal,
    leash,
    session(visible, principal, askedCwd) {
      // One evaluator per (name, principal) (D-13): the kernel's own user keeps plain names.
      const local = leash?.local ?? localPrincipal();
      const name = principal === local ? visible : `${visible}@${principal}`;
      // What the principal's sessions may touch (issue 16; null: unconfined).
      const sandbox = confinement?.(principal) ?? null;
      let p = sessions.get(name);
      if (p) {
        // The session was made under its principal's confinement then: a policy that changed
        // since must not leave it running under a sandbox that is no longer the principal's.
        const key = JSON.stringify(sandbox);
        p = p.then((h) => {
          if (JSON.stringify(h.init.sandbox ?? null) === key) return h;
          throw new RpcError(
            RPC.LEASH_DENIED,
            `session ${JSON.stringify(visible)} runs under another confinement than ` +
              `${principal}'s policy now asks for; attach to a new session name`,
            { session: visible },
          );
        });
      } else {
        // Each session is a process with its own heap: a bound keeps a careless or hostile
        // client from exhausting memory (D-31).
        const limit = opts.maxSessions ?? MAX_SESSIONS;
        if (sessions.size >= limit) {
          throw new RpcError(
            RPC.INTERNAL_ERROR,
            `this kernel already runs ${limit} sessions (the limit); attach to an existing ` +
              `session or start another kernel`,
            { limit },
          );
        }
        // Per principal too (D-31): how many it created (the kernel's own user is bounded by
        // the kernel-wide limit alone), and their heaps together.
        const memoryMb = opts.sessionMemoryMb ?? DEFAULT_SESSION_MEMORY_MB;
        quotas.check(principal, "memory_mb", memoryMb);
        if (principal !== local) quotas.check(principal, "sessions");
        const leases = [quotas.take(principal, "memory_mb", memoryMb)];
        if (principal !== local) leases.push(quotas.take(principal, "sessions"));
        let made: SessionHost | null = null;
        p = (async () => {
          // Its note is shown at attach.
          const start = sessionStartCwd(startDir, askedCwd ?? null);
          const h = made = new SessionHost(name, bus, {
            cwd: start.cwd,
            cwdNote: start.note,
            env: sessionEnv(opts.env ?? Deno.env.toObject()),
            journal,
            principal,
            visibleName: visible,
            leash: leash ? (leash.policies(), leash.init(principal)) : null,
            policyFile: leash ? () => leash.policyFile() : undefined,
            tasks,
            lane: opts.lane !== false,
            memoryMb: opts.sessionMemoryMb,
            runDir,
            // `rm`'s trash lives under it (issue 13): durable, never in /tmp.
            stateDir: journal?.stateDir ?? opts.stateDir ?? null,
            // Never reuse a ref an earlier kernel gave this session (its values are gone).
            firstOut: (await journal?.lastOut(name) ?? 0) + 1,
            sandbox,
            places: {
              state: [
                ...(opts.stateDir ? [opts.stateDir] : []),
                ...(journal ? [journal.casDir, journal.store.intakeDir] : []),
              ],
              runDir,
              socket: bound.path,
            },
          });
          hosts.add(h);
          await h.ready();
          return h;
        })();
        p.catch(() => {
          sessions.delete(name);
          if (made) hosts.delete(made);
          for (const l of leases) l.release();
        });
        sessions.set(name, p);
      }
      return p;
    },
    stats: () => ({
      connections: conns.size,
      connections_total: connectionsTotal,
      sessions: hosts.size,
      live_tasks: tasks.live().length,
      tasks: tasks.size,
      channels: bus.channelCount,
      open_fds: openFds(),
    }),
  });

  const accept = (async () => {
    const pending = new Set<Promise<void>>();
    try {
      for await (const conn of bound.listener) {
        connectionsTotal++;
        conns.add(conn);
        const p = serveConnection<Attachment>(conn, methods, onError).finally(() => {
          conns.delete(conn);
          pending.delete(p);
        });
        pending.add(p);
      }
    } catch (e) {
      if (!closing) onError(e);
    }
    await Promise.allSettled([...pending]);
  })();

  const close = () => {
    closing ??= (async () => {
      bound.close(); // stop accepting; the socket file disappears at once
      for (const c of conns) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
      await Promise.allSettled([...hosts].map((h) => h.close()));
      await accept;
      await journal?.close().catch(onError);
      try {
        Deno.removeSync(runDir, { recursive: true });
      } catch { /* already gone */ }
    })();
    return closing;
  };

  return { path: bound.path, bus, tasks, finished: accept, close };
}

/**
 * A new session's environment: the kernel's, without bearer secrets meant for the kernel's
 * clients (a session must not read the facade's token or approver identity).
 */
function sessionEnv(env: Record<string, string>): Record<string, string> {
  const out = { ...env };
  for (const k of Object.keys(out)) {
    if (k === "SHOAL_TOKEN" || k.startsWith("SHOAL_APPROVER")) delete out[k];
  }
  return out;
}

/** Open file descriptors of this process (-1 when /proc is unreadable). */
function openFds(): number {
  try {
    let n = 0;
    for (const _ of Deno.readDirSync("/proc/self/fd")) n++;
    return n;
  } catch {
    return -1;
  }
}
