/**
 * `shoal attach [SESSION] [--socket PATH]`: the REPL on a named kernel session — the one an
 * agent drives through `shoal-mcp` — so a person sees the same transcript (`out:N`), cwd,
 * bindings and tasks, and can pick up where the agent left off (`out:N` or `out:N.path` at the
 * prompt shows a transcript value without running anything). The agent's execs appear above
 * the prompt as they happen (the `session.transcript` channel); Tab completes with the
 * session's own bindings (the kernel's `complete`). A kernel is started when none answers, as
 * `shoal-mcp` does (unless `kernel.enabled = false` or SHOAL_NO_AUTOSTART).
 *
 * Talks to the kernel through lib/client only, like the MCP facade.
 *
 * @module
 */

import { KernelClient, type KernelEvent, RPC, RpcError, socketPath } from "../client/mod.ts";
import { ensureKernel } from "../client/autostart.ts";
import { processCwd } from "../client/process_cwd.ts";
import type { ShoalConfig } from "../config/mod.ts";
import { cliConfig } from "./batch.ts";
import { formatDiagnostic } from "./diagnostic.ts";
import { colorSupported, Terminal } from "./terminal.ts";
import { writeFd } from "./foreground_pipe.ts";
import type { LineEditor } from "./line_editor.ts";
import type { Completion } from "../eval/complete.ts";
import { type ReplBackend, replLoop } from "./repl.ts";

const USAGE = "usage: shoal attach [SESSION] [--socket PATH]";
const enc = new TextEncoder();

/** Most lines of an agent's result shown above the prompt. */
const PREVIEW_LINES = 8;

function say(text: string, stream = Deno.stdout): void {
  try {
    writeFd(stream, enc.encode(text));
  } catch { /* gone */ }
}

interface AttachArgs {
  session: string | null;
  socket: string | null;
}

function parseArgs(args: string[]): AttachArgs | null | string {
  const out: AttachArgs = { session: null, socket: null };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "-h" || a === "--help") return null;
    if (a === "--socket" || a.startsWith("--socket=")) {
      const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : args[++i];
      if (!v) return "--socket needs a path";
      out.socket = v;
    } else if (a.startsWith("-")) return `unknown option ${JSON.stringify(a)}`;
    else if (out.session === null) out.session = a;
    else return `unexpected argument ${JSON.stringify(a)}`;
  }
  return out;
}

/** `shoal attach`. */
export async function attachMain(args: string[]): Promise<number> {
  const parsed = parseArgs(args);
  if (parsed === null) {
    console.log(
      `${USAGE}\n\nOpens the REPL on kernel session SESSION (default: $SHOAL_SESSION, else ` +
        'kernel.session from shoal.toml, else "default") — the session an agent uses through ' +
        "shoal-mcp. Starts a kernel when none answers (SHOAL_NO_AUTOSTART or kernel.enabled = " +
        "false turn that off).",
    );
    return 0;
  }
  if (typeof parsed === "string") {
    console.error(`shoal attach: ${parsed}\n${USAGE}`);
    return 2;
  }
  if (!Deno.stdin.isTerminal()) {
    console.error("shoal attach: needs a terminal (stdin is not one)");
    return 2;
  }
  const env = Deno.env.toObject();
  const config = cliConfig(Deno.cwd(), env);
  if (config === null) return 2;
  const session = parsed.session ?? (env.SHOAL_SESSION || config.kernel.session);
  let socket: string;
  try {
    socket = socketPath({ explicit: parsed.socket ?? env.SHOAL_SOCKET, session });
  } catch (e) {
    console.error(`shoal attach: ${(e as Error).message}`);
    return 2;
  }
  const autostart = config.kernel.enabled && !env.SHOAL_NO_AUTOSTART;
  let client: KernelClient;
  try {
    await ensureKernel(socket, {
      autostart,
      log: (m) => console.error(`shoal attach: ${m}`),
    });
    client = await KernelClient.connect({
      socket,
      attach: { session, client: { kind: "human", tty: true }, cwd: processCwd() },
      reconnect: true,
      onError: () => {},
    });
  } catch (e) {
    console.error(`shoal attach: ${(e as Error).message}`);
    return 1;
  }
  const backend = await attachBackend(client, session, config, env);
  return await replLoop(backend, config, env);
}

interface ExecResult {
  ref: string;
  render: string;
}

/** The backend that runs submissions in the kernel session. */
async function attachBackend(
  client: KernelClient,
  session: string,
  config: ShoalConfig,
  env: Record<string, string>,
): Promise<ReplBackend> {
  const color = colorSupported(config.render.color, env);
  let cwd = client.attached?.cwd.display ?? Deno.cwd();
  let editor: LineEditor | null = null;
  const mine = new Set<string>();
  const early: KernelEvent[] = [];
  const dim = (s: string) => (color ? `\x1b[2m${s}\x1b[0m` : s);
  const cyan = (s: string) => (color ? `\x1b[36m${s}\x1b[0m` : s);

  const showForeign = async (e: KernelEvent) => {
    const p = e.payload as { ref?: string; summary?: { type?: string; cmd?: string; n?: number } };
    if (typeof p?.ref !== "string" || mine.has(p.ref)) return;
    let body = "";
    try {
      const r = await client.call<{ render: string }>("value.get", {
        ref: p.ref,
        format: "render",
      });
      const lines = r.render.split("\n");
      body = lines.slice(0, PREVIEW_LINES).join("\n") +
        (lines.length > PREVIEW_LINES
          ? `\n${dim(`… ${lines.length - PREVIEW_LINES} more lines`)}`
          : "");
    } catch { /* gone or unreadable: the notice alone */ }
    const sum = p.summary ?? {};
    const what = sum.cmd
      ? `ran \`${sum.cmd}\``
      : sum.type === "null"
      ? "ran a statement"
      : `made a ${sum.type ?? "value"}${typeof sum.n === "number" ? ` of ${sum.n}` : ""}`;
    const head = cyan(`[${p.ref}] another client ${what}`);
    const text = body === "" ? head : `${head}\n${body}`;
    if (editor) editor.printAbove(text);
    else say(text + "\n");
    cwd = (await client.call<{ display: string }>("session.cwd").catch(() => ({ display: cwd })))
      .display;
  };
  // Events that arrive while our own exec is in flight wait for its answer (which names our
  // ref), so our own results are never shown as someone else's.
  let inflight = 0;
  await client.subscribe("session.transcript", (e) => {
    if (editor === null || inflight > 0) early.push(e);
    else void showForeign(e);
  });
  const flush = () => {
    if (editor !== null && inflight === 0) {
      for (const ev of early.splice(0)) {
        void showForeign(ev);
      }
    }
  };
  say(dim(`attached to session "${session}" on ${client.path}; Ctrl-D detaches\n`));

  // Ctrl-C while the kernel runs a submission cancels the session's running task.
  const cancelRunning = async () => {
    const tasks = await client.call<{ task: string; state: string }[]>("task.list")
      .catch(() => []);
    for (const t of tasks) {
      if (t.state === "running") await client.call("task.cancel", { task: t.task }).catch(() => {});
    }
  };
  const run = async (src: string): Promise<number> => {
    // `out:N` or `out:N.path` reads a transcript value (the agent's or ours) without running it.
    const ref = /^\s*(out:[1-9][0-9]*)((?:\.|\[)\S*)?\s*$/.exec(src);
    if (ref !== null) {
      try {
        const r = await client.call<{ render: string }>("value.get", {
          ref: ref[1],
          ...(ref[2] ? { path: ref[2] } : {}),
          format: "render",
        });
        say(r.render.endsWith("\n") ? r.render : r.render + "\n");
        return 0;
      } catch (e) {
        say(`shoal attach: ${ref[1]}: ${(e as Error).message}\n`, Deno.stderr);
        return 1;
      }
    }
    const term = Terminal.shared();
    term.onInterrupt(() => void cancelRunning());
    inflight++;
    try {
      const r = await client.call<ExecResult>("exec", { src, position: "value" });
      mine.add(r.ref);
      if (r.render !== "") say(r.render.endsWith("\n") ? r.render : r.render + "\n");
      const c = await client.call<{ display: string }>("session.cwd");
      cwd = c.display;
      return 0;
    } catch (e) {
      if (e instanceof RpcError) {
        const d = (e.data ?? {}) as {
          code?: string;
          hint?: string | null;
          span?: { start: number; end: number };
          ref?: string;
          status?: number | null;
          stderr?: string | null;
        };
        if (typeof d.ref === "string") mine.add(d.ref);
        if (d.stderr) say(d.stderr.endsWith("\n") ? d.stderr : d.stderr + "\n", Deno.stderr);
        const code = e.code === RPC.PARSE_ERROR ? "parse" : d.code ?? String(e.code);
        const span = d.span ? [d.span.start, d.span.end] as [number, number] : null;
        say(formatDiagnostic(code, e.message, d.hint, span, src, "<attach>", color), Deno.stderr);
        return e.code === RPC.PARSE_ERROR ? 2 : typeof d.status === "number" ? d.status : 1;
      }
      say(`shoal attach: ${(e as Error).message}\n`, Deno.stderr);
      return 1;
    } finally {
      term.onInterrupt(null);
      inflight--;
      flush();
    }
  };

  return {
    session,
    run,
    complete: async (src, cursor) => {
      const r = await client.call<Completion>("complete", { src, cursor });
      // A kernel without `from` replaces the identifier left of the cursor.
      const left = enc.encode(src).subarray(0, cursor);
      const word = /[A-Za-z0-9_]*$/.exec(new TextDecoder().decode(left))![0];
      return { ...r, from: r.from ?? cursor - enc.encode(word).length };
    },
    cwd: () => cwd,
    exitCode: () => null,
    jobCount: () => 0,
    notices: () => [],
    bind: (e) => {
      editor = e;
      flush();
    },
    close: () => {
      client.close();
      return Promise.resolve();
    },
  };
}
