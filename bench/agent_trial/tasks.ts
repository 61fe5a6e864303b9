/**
 * The agent trial's task list: everyday shell work of the kinds issue 13 names — counting files,
 * reading JSON, git history, a 40 s job, a failing command, a 100,000-line output, a stdin
 * prompt, writing and deleting files, … Each task has a prompt (all the agent is told), a setup
 * that lays its fixture in the trial workspace (run again by every `begin`, so a retried task
 * starts clean), and a check that judges the agent's answer — and, for tasks that change files,
 * the workspace — by script.
 *
 * @module
 */

import { join } from "node:path";

/** The verdict on one answer. */
export interface Verdict {
  ok: boolean;
  why: string;
}

/** One task. */
export interface TrialTask {
  id: string;
  /** What the task exercises (for the summary). */
  kind: string;
  /** What the agent is asked, verbatim. Paths are relative to the workspace (the server cwd). */
  prompt: string;
  /** Lay the fixture under `ws` (the workspace); may replace an earlier one. */
  setup(ws: string): Promise<void>;
  /** Judge the agent's final answer (and the workspace, for tasks that change it). */
  check(answer: string, ws: string): Promise<Verdict>;
}

const enc = new TextEncoder();

async function fresh(ws: string, dir: string): Promise<string> {
  const p = join(ws, dir);
  await Deno.remove(p, { recursive: true }).catch(() => {});
  await Deno.mkdir(p, { recursive: true });
  return p;
}

async function write(path: string, text: string, mode?: number): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text, mode ? { mode } : {});
}

async function git(cwd: string, ...args: string[]): Promise<void> {
  const r = await new Deno.Command("git", {
    args,
    cwd,
    env: {
      GIT_AUTHOR_NAME: "Trial",
      GIT_AUTHOR_EMAIL: "trial@example.invalid",
      GIT_COMMITTER_NAME: "Trial",
      GIT_COMMITTER_EMAIL: "trial@example.invalid",
      GIT_AUTHOR_DATE: "2026-01-02T10:00:00Z",
      GIT_COMMITTER_DATE: "2026-01-02T10:00:00Z",
    },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!r.success) throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(r.stderr)}`);
}

/** The answer contains `want` as a whole token (numbers are not matched inside others). */
function says(answer: string, want: string | number): boolean {
  const w = String(want).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^0-9A-Za-z_])${w}($|[^0-9A-Za-z_])`).test(answer.replace(/,/g, ""));
}

const verdict = (ok: boolean, why: string): Verdict => ({ ok, why });

/** Deterministic pseudo-random words, so every trial has the same fixtures. */
function word(i: number): string {
  let x = (i * 2654435761) >>> 0;
  let s = "";
  for (let k = 0; k < 6; k++) {
    s += "abcdefghijklmnopqrstuvwxyz"[x % 26];
    x = Math.floor(x / 26) + k * 7919;
  }
  return s;
}

/** Every task, in the order a trial runs them. */
export const TASKS: TrialTask[] = [
  {
    id: "T01",
    kind: "count files",
    prompt: "How many files ending in .ts are there under the directory t01/src, counting all " +
      "subdirectories? Answer with the number.",
    async setup(ws) {
      const d = await fresh(ws, "t01");
      const files = [
        "src/main.ts",
        "src/util.ts",
        "src/readme.md",
        "src/lib/a.ts",
        "src/lib/b.ts",
        "src/lib/b.test.ts",
        "src/lib/data.json",
        "src/lib/deep/c.ts",
        "src/lib/deep/d.tsx",
        "other/x.ts",
      ];
      for (const f of files) await write(join(d, f), `// ${f}\n`);
    },
    // main, util, a, b, b.test, c (d.tsx is not .ts; other/ is outside src)
    check: (a) => Promise.resolve(verdict(says(a, 6), "6")),
  },
  {
    id: "T02",
    kind: "read JSON",
    prompt: 'What is the "version" field in t02/deno.json, and what is the name of its first ' +
      'task (the first key under "tasks")?',
    async setup(ws) {
      const d = await fresh(ws, "t02");
      await write(
        join(d, "deno.json"),
        JSON.stringify(
          {
            name: "@trial/app",
            version: "3.14.2",
            tasks: { serve: "deno run -A main.ts", test: "deno test" },
            imports: { zod: "npm:zod@4" },
          },
          null,
          2,
        ) + "\n",
      );
    },
    check: (a) =>
      Promise.resolve(verdict(a.includes("3.14.2") && /\bserve\b/.test(a), "3.14.2 and serve")),
  },
  {
    id: "T03",
    kind: "JSON count",
    prompt: 'How many packages are listed under "dependencies" in t03/package.json (not ' +
      "devDependencies)?",
    async setup(ws) {
      const d = await fresh(ws, "t03");
      const deps: Record<string, string> = {};
      for (let i = 0; i < 17; i++) deps[`pkg-${word(i)}`] = `^${i}.0.0`;
      const dev: Record<string, string> = {};
      for (let i = 0; i < 5; i++) dev[`dev-${word(100 + i)}`] = "^1.0.0";
      await write(
        join(d, "package.json"),
        JSON.stringify({ name: "t03", dependencies: deps, devDependencies: dev }, null, 2),
      );
    },
    check: (a) => Promise.resolve(verdict(says(a, 17), "17")),
  },
  {
    id: "T04",
    kind: "git history",
    prompt: "In the git repository t04, what is the subject line of the second most recent " +
      "commit, and who is its author (name)?",
    async setup(ws) {
      const d = await fresh(ws, "t04");
      await git(d, "init", "-q", "-b", "main");
      const steps: Array<[string, string, string]> = [
        ["a.txt", "one", "Start the project"],
        ["b.txt", "two", "Add the parser"],
        ["a.txt", "three", "Fix off-by-one in the lexer"],
        ["c.txt", "four", "Release 0.2"],
      ];
      for (const [f, text, msg] of steps) {
        await write(join(d, f), text + "\n");
        await git(d, "add", f);
        await git(d, "-c", "user.name=Trial", "commit", "-q", "-m", msg);
      }
    },
    check: (a) =>
      Promise.resolve(
        verdict(/fix off-by-one in the lexer/i.test(a) && /\bTrial\b/.test(a), "subject + author"),
      ),
  },
  {
    id: "T05",
    kind: "git log filter",
    prompt: "In the git repository t05, how many commits changed the file notes.md?",
    async setup(ws) {
      const d = await fresh(ws, "t05");
      await git(d, "init", "-q", "-b", "main");
      for (let i = 0; i < 9; i++) {
        const f = i % 3 === 0 ? "notes.md" : `file${i}.txt`;
        await write(join(d, f), `change ${i}\n`);
        await git(d, "add", f);
        await git(d, "commit", "-q", "-m", `change ${i}`);
      }
    },
    check: (a) => Promise.resolve(verdict(says(a, 3), "3")),
  },
  {
    id: "T06",
    kind: "a 40 s job",
    prompt: "Run the script t06/slow.sh (it takes about 40 seconds) and tell me the last line " +
      "it prints.",
    async setup(ws) {
      const d = await fresh(ws, "t06");
      await write(
        join(d, "slow.sh"),
        "#!/bin/sh\necho starting\nsleep 40\necho 'finished: token 7f3a9c'\n",
        0o755,
      );
    },
    check: (a) => Promise.resolve(verdict(a.includes("7f3a9c"), "finished: token 7f3a9c")),
  },
  {
    id: "T07",
    kind: "a failing command",
    prompt: "Run t07/deploy.sh. It fails: report its exit status and the error message it " +
      "printed.",
    async setup(ws) {
      const d = await fresh(ws, "t07");
      await write(
        join(d, "deploy.sh"),
        "#!/bin/sh\necho 'deploying build 41'\necho 'error: disk quota exceeded on /srv' >&2\nexit 3\n",
        0o755,
      );
    },
    check: (a) =>
      Promise.resolve(verdict(says(a, 3) && /disk quota exceeded/i.test(a), "status 3 + message")),
  },
  {
    id: "T08",
    kind: "a 100,000-line output",
    prompt: "The script t08/gen.sh prints 100,000 lines. What is line number 73,512 of its " +
      "output?",
    async setup(ws) {
      const d = await fresh(ws, "t08");
      await write(
        join(d, "gen.sh"),
        '#!/bin/sh\nawk \'BEGIN { for (i = 1; i <= 100000; i++) printf "row %d %x\\n", i, ' +
          "(i * 7919) % 65521 }'\n",
        0o755,
      );
    },
    check: (a) => {
      const want = `row 73512 ${((73512 * 7919) % 65521).toString(16)}`;
      return Promise.resolve(verdict(a.includes(want), want));
    },
  },
  {
    id: "T09",
    kind: "a stdin prompt",
    prompt: "The script t09/ask.sh asks for a name on standard input and then prints an access " +
      "code. Run it, give it the name ada, and tell me the code.",
    async setup(ws) {
      const d = await fresh(ws, "t09");
      await write(
        join(d, "ask.sh"),
        '#!/bin/sh\nprintf "name? "\nread name\nif [ -z "$name" ]; then echo "no name given" >&2; ' +
          'exit 1; fi\necho "code for $name: $(printf %s "$name" | cksum | cut -d" " -f1)"\n',
        0o755,
      );
    },
    async check(a) {
      const r = await new Deno.Command("sh", {
        args: ["-c", "printf %s ada | cksum | cut -d' ' -f1"],
        stdout: "piped",
      }).output();
      const code = new TextDecoder().decode(r.stdout).trim();
      return verdict(says(a, code), code);
    },
  },
  {
    id: "T10",
    kind: "write a file",
    prompt: "Create the file t10/out/report.txt containing exactly three lines: alpha, beta, " +
      "gamma (each followed by a newline). Create the directory if needed. Answer done.",
    async setup(ws) {
      await fresh(ws, "t10");
    },
    async check(_a, ws) {
      const text = await Deno.readTextFile(join(ws, "t10/out/report.txt")).catch(() => null);
      return verdict(text === "alpha\nbeta\ngamma\n", JSON.stringify(text));
    },
  },
  {
    id: "T11",
    kind: "delete files",
    prompt: "Delete every file ending in .tmp in t11/scratch (keep all the other files). How " +
      "many did you delete?",
    async setup(ws) {
      const d = await fresh(ws, "t11");
      for (let i = 0; i < 6; i++) await write(join(d, `scratch/cache-${i}.tmp`), "x\n");
      for (const f of ["keep.txt", "notes.md", "data.tmp.json"]) {
        await write(join(d, "scratch", f), "keep\n");
      }
    },
    async check(a, ws) {
      const left: string[] = [];
      for await (const e of Deno.readDir(join(ws, "t11/scratch"))) left.push(e.name);
      left.sort();
      const want = ["data.tmp.json", "keep.txt", "notes.md"];
      const ok = JSON.stringify(left) === JSON.stringify(want) && says(a, 6);
      return verdict(ok, `left ${left.join(",")}`);
    },
  },
  {
    id: "T12",
    kind: "search a log",
    prompt: "How many lines of t12/app.log contain the word ERROR, and what is the message on " +
      "the last such line (the text after 'ERROR ')?",
    async setup(ws) {
      const d = await fresh(ws, "t12");
      const lines: string[] = [];
      let last = "";
      for (let i = 0; i < 5000; i++) {
        if (i % 97 === 13) {
          last = `upstream ${word(i)} timed out`;
          lines.push(`2026-01-02T10:${String(i % 60).padStart(2, "0")}:00Z ERROR ${last}`);
        } else lines.push(`2026-01-02T10:${String(i % 60).padStart(2, "0")}:00Z INFO ok ${i}`);
      }
      await write(join(d, "app.log"), lines.join("\n") + "\n");
      await write(join(d, "last.txt"), last);
    },
    async check(a, ws) {
      const last = await Deno.readTextFile(join(ws, "t12/last.txt"));
      const n = Array.from({ length: 5000 }, (_, i) => i).filter((i) => i % 97 === 13).length;
      return verdict(says(a, n) && a.includes(last), `${n} + "${last}"`);
    },
  },
  {
    id: "T13",
    kind: "largest file",
    prompt: "Which file in t13/media is the largest, and how large is it in bytes?",
    async setup(ws) {
      const d = await fresh(ws, "t13");
      const sizes = [1200, 48213, 512, 48199, 7000];
      for (let i = 0; i < sizes.length; i++) {
        await Deno.mkdir(join(d, "media"), { recursive: true });
        await Deno.writeFile(
          join(d, `media/clip-${word(i)}.bin`),
          enc.encode("z".repeat(sizes[i])),
        );
      }
    },
    check: (a) =>
      Promise.resolve(
        verdict(a.includes(`clip-${word(1)}`) && says(a, 48213), `clip-${word(1)}.bin 48213`),
      ),
  },
  {
    id: "T14",
    kind: "environment variable",
    prompt: "What is the value of the environment variable TRIAL_REGION in the shell's " +
      "environment? Then list, as a count, how many environment variable names start with " +
      "TRIAL_.",
    setup: () => Promise.resolve(),
    check: (a) => Promise.resolve(verdict(a.includes("eu-north-3") && says(a, 3), "eu-north-3, 3")),
  },
];

/** The environment every trial server starts with (T14 reads it). */
export const TRIAL_ENV: Record<string, string> = {
  TRIAL_REGION: "eu-north-3",
  TRIAL_TIER: "bronze",
  TRIAL_SEED: "42",
};

/** A task by id (case-insensitive). */
export function taskById(id: string): TrialTask | undefined {
  return TASKS.find((t) => t.id.toLowerCase() === id.toLowerCase());
}
