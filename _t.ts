import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
const dir = await Deno.makeTempDir();
const args = [
  "run",
  "-A",
  "--unstable-worker-options",
  "--config",
  "/work/main/deno.json",
  "/work/main/mcp.ts",
  "--socket",
  `${dir}/k.sock`,
  "--session",
  "d",
];
const c = new Client({ name: "trial", version: "1" });
await c.connect(
  new StdioClientTransport({
    command: Deno.execPath(),
    args,
    env: { ...Deno.env.toObject(), XDG_STATE_HOME: `${dir}/state` },
    cwd: dir,
    stderr: "ignore",
  }),
);
for (const src of Deno.args) {
  const r = await c.callTool({ name: "shoal_exec", arguments: { src } }) as Record<string, unknown>;
  console.log(
    `${src} →\n  ${
      ((r.content as Array<{ text?: string }>)[0].text ?? "").replaceAll("\n", "\n  ")
    }${r.isError ? " [isError]" : ""}`,
  );
}
await c.close();
for await (const e of Deno.readDir("/proc")) {
  if (!/^\d+$/.test(e.name)) continue;
  try {
    if ((await Deno.readTextFile(`/proc/${e.name}/cmdline`)).includes(`${dir}/k.sock`)) {
      Deno.kill(Number(e.name), "SIGTERM");
    }
  } catch { /* gone */ }
}
