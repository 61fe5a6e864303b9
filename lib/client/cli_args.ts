/**
 * Command-line flags in the one shape every Shoal CLI takes: `--flag value` or `--flag=value`.
 * Walk the arguments with {@link cliArgs}; each item's `value()` consumes the flag's value (the
 * rest of the word after `=`, else the next argument) and throws `missing(flag)` when there is
 * none.
 *
 * @module
 */

/** One argument: the word, its flag part (before `=`), and a reader of the flag's value. */
export interface CliArg {
  arg: string;
  flag: string;
  value(): string;
}

/** The arguments one by one. */
export function* cliArgs(
  args: readonly string[],
  missing: (flag: string) => Error,
): Generator<CliArg> {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    yield {
      arg,
      flag,
      value: () => {
        const v = eq > 0 ? arg.slice(eq + 1) : args[++i];
        if (v === undefined || v === "") throw missing(flag);
        return v;
      },
    };
  }
}
