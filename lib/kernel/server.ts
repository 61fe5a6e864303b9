/**
 * The kernel server: binds the socket (lib/kernel/listen.ts), accepts connections, routes
 * frames to the method table, and owns the named sessions (one process each), the task registry
 * and the event bus. `startKernel` returns a handle whose `close()` ends everything: sessions
 * cancel their work (child process groups get their kill ladder), session processes end, the
 * socket file goes away.
 *
 * @module
 */

import { bindKernelSocket } from "./listen.ts";
import { RPC, RpcError } from "../client/errors.ts";
import { serveConnection } from "./connection.ts";
import { EventBus } from "./event_bus.ts";
import { SessionHost } from "./session_host.ts";
import { TaskRegistry } from "./tasks.ts";
import { type Attachment, kernelMethods } from "./methods/mod.ts";
import { KernelJournal } from "./kernel_journal.ts";

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
}

/** Default bound on named sessions (each is a process). */
export const MAX_SESSIONS = 64;

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
  const bound = await bindKernelSocket(opts.socket);
  const onError = opts.onError ?? ((e: unknown) => {
    console.error(`shoal-kernel: ${(e as Error)?.stack ?? e}`);
  });
  // Journal (issue 7): durable channels, exec rows, blobs. Opened after the socket is ours.
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
      bound.close();
      throw e;
    }
  }
  const bus = new EventBus(journal?.durable ?? null);
  if (journal) journal.bus = bus;
  // An evicted task takes its `task.N` channel with it, so the bus stays bounded too.
  const tasks = new TaskRegistry((t) => bus.drop(t.session, t.channel), opts.maxFinishedTasks);
  // `task.N` events live in the task records; the bus makes a channel only for subscribers.
  bus.derived = (scope, channel) => tasks.channelEvents(scope, channel);
  // Private to this kernel (0700): the cancel-slot files it shares with its sessions.
  const runDir = Deno.makeTempDirSync({ prefix: "shoal-kernel-" });
  const sessions = new Map<string, Promise<SessionHost>>();
  const hosts = new Set<SessionHost>();
  const conns = new Set<Deno.Conn>();
  let connectionsTotal = 0;
  let closing: Promise<void> | null = null;

  const methods = kernelMethods({
    bus,
    tasks,
    maxQueued: opts.maxQueued,
    journal,
    session(name) {
      let p = sessions.get(name);
      if (!p) {
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
        const h = new SessionHost(name, bus, {
          cwd: opts.cwd ?? Deno.cwd(),
          env: opts.env ?? Deno.env.toObject(),
          journal,
          memoryMb: opts.sessionMemoryMb,
          runDir,
        });
        hosts.add(h);
        p = h.ready().then(() => h);
        p.catch(() => {
          sessions.delete(name);
          hosts.delete(h);
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
