/**
 * Wake-ups on SIGCHLD, for reapers that must see a child *stop* or *continue* (job control):
 * a pidfd only becomes readable when the child exits. The process-wide signal listener is
 * installed while someone waits and removed when nobody does, so it costs nothing otherwise
 * (and it never keeps the event loop alive). SIGCHLDs coalesce: a waiter re-checks every
 * child it cares about with waitpid(WNOHANG) after each wake-up.
 *
 * @module
 */

const waiters = new Set<() => void>();
let listening: "yes" | "no" | "unavailable" = "no";
let poll: ReturnType<typeof setInterval> | undefined;
/** Where signal listeners cannot be installed, waiters are woken this often instead. */
const FALLBACK_POLL_MS = 100;

function wakeAll(): void {
  const ws = [...waiters];
  waiters.clear();
  for (const w of ws) w();
  idle();
}

function idle(): void {
  if (waiters.size > 0) return;
  if (listening === "yes") {
    Deno.removeSignalListener("SIGCHLD", wakeAll);
    listening = "no";
  }
  if (poll !== undefined) {
    clearInterval(poll);
    poll = undefined;
  }
}

function listen(): void {
  if (listening === "yes") return;
  if (listening === "no") {
    try {
      Deno.addSignalListener("SIGCHLD", wakeAll);
      listening = "yes";
      return;
    } catch {
      listening = "unavailable";
    }
  }
  if (poll === undefined) {
    poll = setInterval(wakeAll, FALLBACK_POLL_MS);
    Deno.unrefTimer(poll);
  }
}

/** One wake-up: `promise` resolves at the next SIGCHLD; `cancel` withdraws it. */
export interface SigchldWaiter {
  promise: Promise<void>;
  cancel(): void;
}

/** Wait for the next SIGCHLD. Create it *before* checking children, so none is missed. */
export function sigchldWaiter(): SigchldWaiter {
  let wake!: () => void;
  const promise = new Promise<void>((r) => (wake = r));
  waiters.add(wake);
  listen();
  return {
    promise,
    cancel() {
      if (waiters.delete(wake)) idle();
    },
  };
}
