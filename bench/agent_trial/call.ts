/**
 * The agent trial's command line. An agent uses it through bash to call ONE long-lived MCP
 * server per trial; the person running the trial uses it to start, show, set tasks and judge.
 *
 *   call.ts start SERVER              start the trial's server and hub (SERVER: shoal | bash)
 *   call.ts show SERVER               print the instructions + tools/list text an agent is shown
 *   call.ts tasks                     list the tasks (id, kind, prompt)
 *   call.ts begin SERVER TASK         lay the task's fixture, attribute calls to it, print its prompt
 *   call.ts SERVER TOOL 'JSON-ARGS'   call a tool; prints the text the agent sees
 *   call.ts answer SERVER TASK 'TEXT' judge an answer (and the workspace) and record it
 *   call.ts stop SERVER               stop the hub and its server
 *
 * The trial directory is `$AGENT_TRIAL_DIR/SERVER` (default `/tmp/shoal-agent-trial/SERVER`): `ws/`
 * (the servers' cwd; task fixtures live there), `calls.jsonl`, `answers.jsonl`. `summary.ts`
 * prints the numbers.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ServerName, SERVERS, shownText, startServer, trialDirs } from "./servers.ts";
import { taskById, TASKS } from "./tasks.ts";

type Obj = Record<string, unknown>;

const USAGE = "usage: call.ts start|show|stop SERVER | tasks | begin SERVER TASK | " +
  "answer SERVER TASK TEXT | SERVER TOOL 'JSON-ARGS'   (SERVER: shoal | bash)";

function fail(msg: string): never {
  console.error(msg);
  Deno.exit(2);
}

function serverArg(s: string | undefined): ServerName {
  if (!SERVERS.includes(s as ServerName)) fail(USAGE);
  return s as ServerName;
}

/** One request to the hub over its Unix socket. */
async function hub(server: ServerName, req: Obj): Promise<Obj> {
  const sock = join(trialDirs(server).dir, "hub.sock");
  let conn: Deno.UnixConn;
  try {
    conn = await Deno.connect({ transport: "unix", path: sock });
  } catch {
    fail(`no trial hub for ${server}: run \`call.ts start ${server}\` first`);
  }
  await conn.write(new TextEncoder().encode(JSON.stringify(req) + "\n"));
  let buf = "";
  const b = new Uint8Array(1 << 16);
  while (true) {
    const n = await conn.read(b);
    if (n === null) break;
    buf += new TextDecoder().decode(b.subarray(0, n));
  }
  conn.close();
  return JSON.parse(buf);
}

async function start(server: ServerName): Promise<void> {
  const dirs = trialDirs(server);
  // A fresh trial: everything but the installed peer server goes.
  await Deno.mkdir(dirs.dir, { recursive: true });
  for (const e of Deno.readDirSync(dirs.dir)) {
    if (e.name !== "peer") await Deno.remove(join(dirs.dir, e.name), { recursive: true });
  }
  await Deno.mkdir(dirs.ws, { recursive: true });
  const hubTs = fileURLToPath(new URL("./hub.ts", import.meta.url));
  const config = fileURLToPath(new URL("../../deno.json", import.meta.url));
  const log = join(dirs.dir, "hub.log");
  // Detached from this process (and from the agent's shell): it outlives `call.ts start`.
  const script = 'setsid "$0" run -A --unstable-worker-options --config "$1" "$2" "$3" ' +
    '>"$4" 2>&1 </dev/null &';
  await new Deno.Command("sh", {
    args: ["-c", script, Deno.execPath(), config, hubTs, server, log],
  }).output();
  const sock = join(dirs.dir, "hub.sock");
  const deadline = Date.now() + 300_000; // the first bash trial installs its server with npm
  while (!(await Deno.stat(sock).then(() => true, () => false))) {
    const text = await Deno.readTextFile(log).catch(() => "");
    if (Date.now() > deadline || /error|exited/i.test(text)) {
      fail(`the ${server} hub did not start:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`${server} trial running in ${dirs.dir} (workspace ${dirs.ws})`);
}

async function main(args: string[]): Promise<void> {
  const [cmd, a1, a2, a3] = args;
  switch (cmd) {
    case "start":
      return await start(serverArg(a1));
    case "stop": {
      const server = serverArg(a1);
      await hub(server, { op: "stop" });
      console.log(`${server} trial stopped`);
      return;
    }
    case "show": {
      const server = serverArg(a1);
      const sock = join(trialDirs(server).dir, "hub.sock");
      const running = await Deno.stat(sock).then(() => true, () => false);
      if (running) return console.log(String((await hub(server, { op: "show" })).text));
      const dirs = { dir: await Deno.makeTempDir({ prefix: "agent-trial-show-" }), ws: "" };
      dirs.ws = join(dirs.dir, "ws");
      const r = await startServer(server, dirs);
      try {
        console.log(await shownText(r));
      } finally {
        await r.close();
        await Deno.remove(dirs.dir, { recursive: true }).catch(() => {});
      }
      return;
    }
    case "tasks":
      for (const t of TASKS) console.log(`${t.id}  [${t.kind}]  ${t.prompt}`);
      return;
    case "begin": {
      const server = serverArg(a1);
      const task = taskById(a2 ?? "") ?? fail(`unknown task ${a2}`);
      const dirs = trialDirs(server);
      // A task laid out for a hub that is not running would be laid in the wrong workspace.
      try {
        Deno.statSync(join(dirs.dir, "hub.sock"));
      } catch {
        fail(`no trial hub for ${server} in ${dirs.dir}: run \`call.ts start ${server}\` first`);
      }
      await task.setup(dirs.ws);
      await Deno.writeTextFile(join(dirs.dir, "state.json"), JSON.stringify({ task: task.id }));
      console.log(task.prompt);
      return;
    }
    case "answer": {
      const server = serverArg(a1);
      const task = taskById(a2 ?? "") ?? fail(`unknown task ${a2}`);
      const dirs = trialDirs(server);
      const answer = a3 ?? "";
      const v = await task.check(answer, dirs.ws).catch((e) => ({
        ok: false,
        why: `check failed: ${(e as Error).message}`,
      }));
      const rec = { ts: new Date().toISOString(), server, task: task.id, answer, ...v };
      await Deno.writeTextFile(join(dirs.dir, "answers.jsonl"), JSON.stringify(rec) + "\n", {
        append: true,
      });
      await Deno.writeTextFile(join(dirs.dir, "state.json"), JSON.stringify({ task: null }));
      console.log(`${task.id} ${v.ok ? "solved" : "NOT solved"} (expected ${v.why})`);
      return;
    }
  }
  if (!SERVERS.includes(cmd as ServerName) || a1 === undefined) fail(USAGE);
  let toolArgs: Obj;
  try {
    toolArgs = JSON.parse(a2 ?? "{}");
  } catch (e) {
    fail(`JSON-ARGS is not JSON: ${(e as Error).message}`);
  }
  const r = await hub(cmd as ServerName, { op: "call", tool: a1, args: toolArgs });
  if (r.isError) console.log("[isError]");
  console.log(String(r.text ?? r.error ?? ""));
}

if (import.meta.main) await main(Deno.args);
