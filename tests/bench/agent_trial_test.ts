/**
 * The agent trial's task list is right: every task's fixture is laid in a temp workspace, its
 * answer is worked out the bash way with real tools (find, jq-free sed/awk, git, the scripts
 * themselves), and the task's own check accepts that answer and rejects a wrong one.
 */

import { ok as assert } from "node:assert/strict";
import { TASKS, TRIAL_ENV } from "../../bench/agent_trial/tasks.ts";

async function sh(ws: string, script: string): Promise<string> {
  const r = await new Deno.Command("sh", {
    args: ["-c", script],
    cwd: ws,
    env: { ...Deno.env.toObject(), ...TRIAL_ENV },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr) +
    ` exit ${r.code}`;
}

/** How a bash user answers each task (T10/T11 change the workspace instead). */
const BASH: Record<string, string> = {
  T01: "find t01/src -name '*.ts' | wc -l",
  T02: "grep -m1 '\"version\"' t02/deno.json; grep -A1 '\"tasks\"' t02/deno.json | tail -1",
  T03: "awk '/\"dependencies\"/{on=1;next} /}/{on=0} on' t03/package.json | grep -c ':'",
  T04: "cd t04 && git log -2 --format='%s by %an' | tail -1",
  T05: "cd t05 && git log --oneline -- notes.md | wc -l",
  T06: "tail -1 t06/slow.sh", // the real run takes 40 s; its last echo is the answer
  T07: "t07/deploy.sh",
  T08: "t08/gen.sh | sed -n 73512p",
  T09: "echo ada | t09/ask.sh",
  T10: "mkdir -p t10/out && printf 'alpha\\nbeta\\ngamma\\n' > t10/out/report.txt && echo done",
  T11: "ls t11/scratch/*.tmp | wc -l; rm t11/scratch/*.tmp",
  T12: "grep -c ERROR t12/app.log; grep ERROR t12/app.log | tail -1 | sed 's/.*ERROR //'",
  T13: "ls -lS t13/media | sed -n 2p",
  T14: "echo $TRIAL_REGION; env | grep -c '^TRIAL_'",
};

Deno.test("agent trial: every task's expected answer is what bash finds", async () => {
  assert(TASKS.length >= 12, "at least twelve tasks");
  for (const t of TASKS) {
    const ws = await Deno.makeTempDir({ prefix: "agent-trial-test-" });
    try {
      await t.setup(ws);
      await t.setup(ws); // begin may run again: setup replaces its fixture
      assert(BASH[t.id], `${t.id} has a bash answer`);
      const answer = await sh(ws, BASH[t.id]);
      const v = await t.check(answer, ws);
      assert(v.ok, `${t.id} accepts the bash answer ${JSON.stringify(answer)} (${v.why})`);
      const wrong = await t.check("I could not find it (0)", ws);
      if (t.id !== "T10") assert(!wrong.ok, `${t.id} rejects a wrong answer`);
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  }
});
