/**
 * `shoal attach` in a real terminal: it starts a kernel when none answers, and an exec made
 * through the kernel by another client appears on the person's screen as it happens.
 */

import { ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { KernelClient } from "../../lib/client/mod.ts";
import { haveTmux, pidsMatching, shoalCommand, sleep, Tmux } from "./_tmux.ts";

Deno.test({
  name: "attach: autostarts a kernel and shows another client's exec live; shares bindings",
  ignore: !haveTmux(),
  fn: async () => {
    const t = await Tmux.create({ NO_COLOR: "1" });
    const socket = join(t.env.XDG_RUNTIME_DIR, "k", "pair.sock");
    let agent: KernelClient | null = null;
    try {
      await t.spawn(shoalCommand(["attach", "pair", "--socket", socket]));
      await t.waitFor(/^pair:.* >$/m, 30_000);
      agent = await KernelClient.connect({ socket, attach: { session: "pair" } });
      await agent.call("exec", {
        src: 'let from_agent = [{file: "a.ts", lines: 12}]',
        position: "value",
      });
      await agent.call("exec", { src: "from_agent", position: "value" });
      const s = await t.waitFor(/\[out:2\] another client/, 15_000);
      assert(/^file\s+lines$/m.test(s) && /^a\.ts\s+12$/m.test(s), s);
      // The person continues from what the agent left: same bindings, Tab included.
      await t.type("from_ag");
      await t.send("Tab");
      await t.waitFor(/> from_agent$/m);
      await t.type(".map(.lines)");
      await t.send("Enter");
      await t.waitFor(/^\[12\]$/m);
      // Our own result is not announced as someone else's.
      await sleep(300);
      assert(!/\[out:3\] another client/.test(await t.screen(100)));
      await t.type("out:2[0].file");
      await t.send("Enter");
      await t.waitFor(/^"a\.ts"$/m);
    } finally {
      agent?.close();
      await t.kill();
      for (const pid of pidsMatching(socket)) {
        try {
          Deno.kill(pid, "SIGTERM");
        } catch { /* gone */ }
      }
      await sleep(300);
      await t.close();
    }
  },
});
