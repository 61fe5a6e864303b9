/**
 * A seccomp filter for what Landlock ABI 7 cannot see on the network: it mediates TCP
 * connect/bind by port but not UDP, raw, SCTP or MPTCP sockets, and not `connect` on a
 * pathname Unix socket. Installed by the sandbox launcher next to its Landlock domain
 * (inherited across fork and exec, like it), the filter lets `socket(AF_INET|AF_INET6, …)`
 * create plain TCP sockets only (or any, or none), refuses every other family but netlink, and
 * refuses `io_uring_setup` (io_uring can create sockets without the `socket` syscall). Every
 * other syscall passes.
 *
 * @module
 */

import { confineLibc } from "./confine_libc.ts";

const PR_SET_SECCOMP = 22, SECCOMP_MODE_FILTER = 2;
const RET_ALLOW = 0x7fff0000;
const EACCES = 13;
const RET_EACCES = 0x00050000 | EACCES;
const LD_ABS_W = 0x20, JEQ_K = 0x15, JGE_K = 0x35, AND_K = 0x54, RET_K = 0x06;
const AF_INET = 2, AF_INET6 = 10, AF_NETLINK = 16;
const SOCK_STREAM = 1, SOCK_TYPE_MASK = 0xf, IPPROTO_TCP = 6;
const X32_SYSCALL_BIT = 0x40000000;

/** Per architecture: its audit id and syscall numbers. */
const ARCH: Record<string, { audit: number; socket: number; ioUringSetup: number }> = {
  x86_64: { audit: 0xc000003e, socket: 41, ioUringSetup: 425 },
  aarch64: { audit: 0xc00000b7, socket: 198, ioUringSetup: 425 },
};

/** Offsets in `struct seccomp_data`: nr, arch, ip, args[6] (low 32 bits first). */
const OFF_NR = 0, OFF_ARCH = 4, OFF_ARG0 = 16, OFF_ARG1 = 24, OFF_ARG2 = 32;

/**
 * Which IP sockets may be created: `any` (every type), `tcp` (plain TCP only: Landlock then
 * rules its ports), `none`.
 */
export type IpSockets = "any" | "tcp" | "none";

/** True when this architecture has a filter here. */
export function seccompAvailable(): boolean {
  return Deno.build.os === "linux" && ARCH[Deno.build.arch] !== undefined;
}

type Insn = [code: number, jt: number, jf: number, k: number];

/**
 * The BPF program (exported for tests). Families: IP as `ip` says, netlink (interface and
 * route queries) always, everything else — Unix sockets among them — never: a Unix socket
 * could connect to a kernel's socket (or any other) by path, which Landlock ABI 7 does not
 * mediate. `socketpair` stays allowed (a pair reaches nothing else).
 */
export function ipSocketFilter(ip: IpSockets, arch = Deno.build.arch): Insn[] {
  const a = ARCH[arch];
  if (a === undefined) throw new Error(`no seccomp filter for ${arch}`);
  const ipVerdict = ip === "none" ? RET_EACCES : RET_ALLOW;
  // Jumps are relative: jt/jf skip that many instructions after the current one.
  return [
    /* 0 */ [LD_ABS_W, 0, 0, OFF_ARCH],
    /* 1 */ [JEQ_K, 1, 0, a.audit],
    /* 2 */ [RET_K, 0, 0, RET_EACCES], // a foreign ABI in this process: refuse everything
    /* 3 */ [LD_ABS_W, 0, 0, OFF_NR],
    /* 4 */ [JGE_K, 15, 0, X32_SYSCALL_BIT], // x32 syscalls → 20
    /* 5 */ [JEQ_K, 14, 0, a.ioUringSetup], // → 20
    /* 6 */ [JEQ_K, 1, 0, a.socket],
    /* 7 */ [RET_K, 0, 0, RET_ALLOW],
    /* 8 */ [LD_ABS_W, 0, 0, OFF_ARG0],
    /* 9 */ [JEQ_K, 4, 0, AF_INET], // → 14
    /* 10 */ [JEQ_K, 3, 0, AF_INET6], // → 14
    /* 11 */ [JEQ_K, 1, 0, AF_NETLINK], // → 13
    /* 12 */ [RET_K, 0, 0, RET_EACCES],
    /* 13 */ [RET_K, 0, 0, RET_ALLOW],
    /* 14 */ [LD_ABS_W, 0, 0, OFF_ARG1], // `any`: replaced by an allow (every IP socket)
    /* 15 */ [AND_K, 0, 0, SOCK_TYPE_MASK],
    /* 16 */ [JEQ_K, 0, 3, SOCK_STREAM], // not a stream → 20
    /* 17 */ [LD_ABS_W, 0, 0, OFF_ARG2],
    /* 18 */ [JEQ_K, 2, 0, 0], // protocol 0 → 21
    /* 19 */ [JEQ_K, 1, 0, IPPROTO_TCP], // → 21
    /* 20 */ [RET_K, 0, 0, RET_EACCES],
    /* 21 */ [RET_K, 0, 0, ipVerdict],
  ].map((insn, i) => (ip === "any" && i === 14 ? [RET_K, 0, 0, RET_ALLOW] : insn) as Insn);
}

/**
 * Install the filter on the calling thread (no_new_privs must be set: the Landlock step does
 * it). Throws when the kernel refuses it.
 */
export function installIpSocketFilter(ip: IpSockets): void {
  const prog = ipSocketFilter(ip);
  const filter = new Uint8Array(prog.length * 8);
  const dv = new DataView(filter.buffer);
  prog.forEach(([code, jt, jf, k], i) => {
    dv.setUint16(i * 8, code, true);
    dv.setUint8(i * 8 + 2, jt);
    dv.setUint8(i * 8 + 3, jf);
    dv.setUint32(i * 8 + 4, k >>> 0, true);
  });
  // struct sock_fprog { unsigned short len; struct sock_filter *filter; }
  const fprog = new Uint8Array(16);
  const fv = new DataView(fprog.buffer);
  fv.setUint16(0, prog.length, true);
  fv.setBigUint64(8, BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(filter))), true);
  const l = confineLibc();
  if (l === null) throw new Error("no FFI to install the socket filter with");
  if (l.prctlPtr(PR_SET_SECCOMP, BigInt(SECCOMP_MODE_FILTER), fprog, 0n, 0n) !== 0) {
    throw new Error("prctl(PR_SET_SECCOMP) refused the socket filter");
  }
}
