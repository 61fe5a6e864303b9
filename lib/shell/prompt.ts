/**
 * The REPL prompt: `prompt.template` with `{cwd}` (`~` for HOME), `{git}` (` (branch)`),
 * `{status}` (` [N]` after a failure), `{jobs}` (` [N jobs]`) and `{session}` (`shoal attach`),
 * coloured when colour is on. The git branch is read from `.git/HEAD` (worktrees included):
 * no `git` process per prompt.
 *
 * @module
 */

import { dirname, join, resolve } from "node:path";

/** The facts a prompt shows (gathered once per prompt). */
export interface PromptFacts {
  cwd: string;
  home?: string;
  status: number;
  jobs: number;
  session?: string;
  color: boolean;
}

/** The branch (or short commit) checked out in the repository around `cwd`, or null. */
export function gitBranch(cwd: string): string | null {
  for (let dir = resolve(cwd), i = 0; i < 64; dir = dirname(dir), i++) {
    const dot = join(dir, ".git");
    let head: string | null = null;
    try {
      const st = Deno.statSync(dot);
      let gitDir = dot;
      if (st.isFile) {
        // A worktree or submodule: `gitdir: <path>`.
        const m = /^gitdir:\s*(.+)$/m.exec(Deno.readTextFileSync(dot));
        if (!m) return null;
        gitDir = resolve(dir, m[1].trim());
      }
      head = Deno.readTextFileSync(join(gitDir, "HEAD")).trim();
    } catch { /* not here */ }
    if (head !== null) {
      const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(head);
      return ref ? ref[1] : head.slice(0, 7);
    }
    if (dirname(dir) === dir) return null;
  }
  return null;
}

/** `cwd` with the home directory shown as `~`. */
export function tildeCwd(cwd: string, home: string | undefined): string {
  if (home && home !== "/" && (cwd === home || cwd.startsWith(home + "/"))) {
    return "~" + cwd.slice(home.length);
  }
  return cwd;
}

/** The prompt text for `template` (see the module comment). */
export function renderPrompt(template: string, f: PromptFacts): string {
  const c = (code: string, s: string) => (f.color && s !== "" ? `\x1b[${code}m${s}\x1b[0m` : s);
  const branch = template.includes("{git}") ? gitBranch(f.cwd) : null;
  const parts: Record<string, string> = {
    cwd: c("1;34", tildeCwd(f.cwd, f.home)),
    git: branch === null ? "" : " " + c("35", `(${branch})`),
    status: f.status === 0 ? "" : " " + c("1;31", `[${f.status}]`),
    jobs: f.jobs === 0 ? "" : " " + c("33", `[${f.jobs} job${f.jobs === 1 ? "" : "s"}]`),
    session: f.session === undefined ? "" : c("36", `${f.session}:`),
  };
  return template.replace(/\{(cwd|git|status|jobs|session)\}/g, (_, k) => parts[k]);
}
