/**
 * A second local user for hostile-directory tests (issue 19): created for the test with
 * `useradd`, acting through `setpriv`, removed afterwards. Only root can do that (CI runs as
 * root); elsewhere `intruder()` returns null and the caller skips with a visible message.
 */

/** The other user: its ids and a way to run a command as it. */
export interface Intruder {
  name: string;
  uid: number;
  gid: number;
  /** Run `argv` as the intruder; resolves with its exit code and output. */
  run(argv: string[]): Promise<{ code: number; out: string }>;
  /** Start `argv` as the intruder in the background. */
  spawn(argv: string[]): Deno.ChildProcess;
  remove(): Promise<void>;
}

async function sh(argv: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await new Deno.Command(argv[0], {
      args: argv.slice(1),
      stdout: "piped",
      stderr: "piped",
    })
      .output();
    const d = new TextDecoder();
    return { code: r.code, out: d.decode(r.stdout) + d.decode(r.stderr) };
  } catch (e) {
    return { code: -1, out: (e as Error).message };
  }
}

/** Create the second user, or null (with the reason printed) when this machine cannot. */
export async function intruder(test: string): Promise<Intruder | null> {
  const skip = (why: string) => {
    console.warn(`SKIPPED (${test}): needs a second Unix user: ${why}`);
    return null;
  };
  if (Deno.uid() !== 0) return skip("only root can create one (CI runs as root)");
  const name = `shoal-t19-${Deno.pid % 100000}`;
  await sh(["userdel", name]); // a leftover of a killed run
  const add = await sh(["useradd", "--no-create-home", "--shell", "/bin/sh", name]);
  if (add.code !== 0) return skip(`useradd failed: ${add.out.trim()}`);
  const id = async (flag: string) => Number((await sh(["id", flag, name])).out.trim());
  const uid = await id("-u");
  const gid = await id("-g");
  const as = (argv: string[]) => [
    "setpriv",
    `--reuid=${uid}`,
    `--regid=${gid}`,
    "--clear-groups",
    "--",
    ...argv,
  ];
  const probe = await sh(as(["true"]));
  if (probe.code !== 0) {
    await sh(["userdel", name]);
    return skip(`setpriv cannot switch to it: ${probe.out.trim()}`);
  }
  return {
    name,
    uid,
    gid,
    run: (argv) => sh(as(argv)),
    spawn: (argv) => {
      const a = as(argv);
      return new Deno.Command(a[0], {
        args: a.slice(1),
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    },
    remove: async () => {
      await sh(["userdel", name]);
    },
  };
}
