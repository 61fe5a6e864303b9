/**
 * Linux signal numbers and names (x86_64 / aarch64 numbering).
 *
 * Names carry the `SIG` prefix, as outcomes report them (`"SIGSEGV"`). Real-time signals
 * follow bash's `kill -l` spelling (`SIGRTMIN`, `SIGRTMIN+1` … `SIGRTMAX-1`, `SIGRTMAX`);
 * 32 and 33 are reserved by glibc's threading and are reported as `SIG32` / `SIG33`.
 *
 * @module
 */

/** The classic signals, number → canonical name. */
const CLASSIC: readonly (readonly [number, string])[] = [
  [1, "SIGHUP"],
  [2, "SIGINT"],
  [3, "SIGQUIT"],
  [4, "SIGILL"],
  [5, "SIGTRAP"],
  [6, "SIGABRT"],
  [7, "SIGBUS"],
  [8, "SIGFPE"],
  [9, "SIGKILL"],
  [10, "SIGUSR1"],
  [11, "SIGSEGV"],
  [12, "SIGUSR2"],
  [13, "SIGPIPE"],
  [14, "SIGALRM"],
  [15, "SIGTERM"],
  [16, "SIGSTKFLT"],
  [17, "SIGCHLD"],
  [18, "SIGCONT"],
  [19, "SIGSTOP"],
  [20, "SIGTSTP"],
  [21, "SIGTTIN"],
  [22, "SIGTTOU"],
  [23, "SIGURG"],
  [24, "SIGXCPU"],
  [25, "SIGXFSZ"],
  [26, "SIGVTALRM"],
  [27, "SIGPROF"],
  [28, "SIGWINCH"],
  [29, "SIGIO"],
  [30, "SIGPWR"],
  [31, "SIGSYS"],
];

/** Other spellings accepted by {@link signalNumber}. */
const ALIASES: Readonly<Record<string, number>> = {
  SIGIOT: 6,
  SIGCLD: 17,
  SIGPOLL: 29,
  SIGUNUSED: 31,
};

/** Lowest and highest signal number on Linux. */
export const SIGNAL_MIN = 1;
/** Highest signal number on Linux (`SIGRTMAX`). */
export const SIGNAL_MAX = 64;

const RTMIN = 34; // glibc's SIGRTMIN (the kernel's 32 and 33 are taken by NPTL)
const RTMAX = 64;

const NAME_BY_NUMBER = new Map<number, string>();
const NUMBER_BY_NAME = new Map<string, number>();
for (const [n, name] of CLASSIC) NAME_BY_NUMBER.set(n, name);
for (let n = 32; n <= RTMAX; n++) NAME_BY_NUMBER.set(n, realtimeName(n));
for (const [n, name] of NAME_BY_NUMBER) NUMBER_BY_NAME.set(name, n);
for (const [name, n] of Object.entries(ALIASES)) NUMBER_BY_NAME.set(name, n);

function realtimeName(n: number): string {
  if (n < RTMIN) return `SIG${n}`;
  if (n === RTMIN) return "SIGRTMIN";
  if (n === RTMAX) return "SIGRTMAX";
  // bash splits the range at the midpoint: up to RTMIN+15 counts up, the rest counts down.
  return n - RTMIN <= 15 ? `SIGRTMIN+${n - RTMIN}` : `SIGRTMAX-${RTMAX - n}`;
}

/**
 * The canonical name of signal `n` (`11` → `"SIGSEGV"`). Numbers outside 1…64 yield
 * `"SIG<n>"`, so a status decoder never has to fail.
 */
export function signalName(n: number): string {
  return NAME_BY_NUMBER.get(n) ?? `SIG${n}`;
}

/**
 * The number of a signal given by name, case-insensitive, with or without the `SIG`
 * prefix (`"segv"`, `"SIGSEGV"`, `"RTMIN+3"`, `"SIG40"`), or by its decimal number as a
 * string. Returns `null` for an unknown name.
 */
export function signalNumber(name: string): number | null {
  const trimmed = name.trim();
  if (/^\d+$/.test(trimmed)) {
    const n = Number(trimmed);
    return n >= SIGNAL_MIN && n <= SIGNAL_MAX ? n : null;
  }
  let upper = trimmed.toUpperCase();
  if (!upper.startsWith("SIG")) upper = "SIG" + upper;
  const known = NUMBER_BY_NAME.get(upper);
  if (known !== undefined) return known;
  const numeric = /^SIG(\d+)$/.exec(upper);
  if (numeric) return signalNumber(numeric[1]);
  const rt = /^SIGRT(MIN|MAX)([+-])(\d+)$/.exec(upper);
  if (rt) {
    const base = rt[1] === "MIN" ? RTMIN : RTMAX;
    const n = rt[2] === "+" ? base + Number(rt[3]) : base - Number(rt[3]);
    return n >= RTMIN && n <= RTMAX ? n : null;
  }
  return null;
}

/** Every signal 1…64 as `[number, canonical name]`, in numeric order. */
export function signalTable(): [number, string][] {
  return [...NAME_BY_NUMBER.entries()].sort((a, b) => a[0] - b[0]);
}
