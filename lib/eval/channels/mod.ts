/**
 * Channels in the language (language §15 step 3, §16): `channel(name)` handles, their methods
 * `emit events latest take`, `on(channel, handler)`, `stream.into(channel)`, and the kernel
 * bridge.
 *
 * Every evaluator has its own bus (tasks spawned in it share it). Kernel bridge, both ways and
 * without echo: a language emit on a `user.*` channel calls `ev.onUserEmit(channel, payload)`
 * (set by the host); `ev.injectUserEvent(channel, payload)` publishes a host event locally and
 * never calls `onUserEmit` back.
 *
 * @module
 */

import { fail } from "../../value/errors.ts";
import { DurationV, isInt, RecordV, typeName, type Value } from "../../value/types.ts";
import { formatDuration } from "../../value/render.ts";
import type { Interp, MethodArgs } from "../method_types.ts";
import { then } from "../maybe.ts";
import { currentTask } from "../tasks.ts";
import { type Evaluator, installHooks } from "../evaluator.ts";
import { registerCallForm } from "../builtins/registry.ts";
import { arity, checkNamed, isCallable } from "../methods/args.ts";
import { RECORD_METHOD_NAMES } from "../methods/record.ts";
import { UNIVERSAL_METHOD_NAMES } from "../methods/universal.ts";
import { drain, mkStream } from "../streams/core.ts";
import { channelEmitter, isChannelHandle } from "../streams/methods.ts";
import { ChannelBus } from "./bus.ts";
import { doc } from "../docs.ts";

export { ChannelBus, RING_CAPACITY, SUBSCRIBER_CAPACITY } from "./bus.ts";

const BUSES = new WeakMap<Evaluator, ChannelBus>();

/** The evaluator's channel bus (created on first use). */
export function busOf(ev: Evaluator): ChannelBus {
  let b = BUSES.get(ev);
  if (b === undefined) {
    b = new ChannelBus(ev.ports.clock);
    BUSES.set(ev, b);
  }
  return b;
}

/** A language emit: publish locally, then forward `user.*` channels to the host. */
export function emit(ev: Evaluator, name: string, payload: Value): null {
  busOf(ev).publish(name, payload);
  const fwd = ev.onUserEmit;
  if (fwd !== null && name.startsWith("user.")) {
    try {
      fwd(name, payload);
    } catch {
      // A failing host bridge must not break the language emit.
    }
  }
  return null;
}

/** The channel handle record `{channel: name}`. */
export function channelHandle(name: string): RecordV {
  return new RecordV(new Map<string, Value>([["channel", name]]));
}

function channelName(v: Value | undefined, what: string, span: MethodArgs["span"]): string {
  if (v === undefined) throw fail("arg_error", `${what} requires a channel name`, null, span);
  if (typeof v === "string") return v;
  if (isChannelHandle(v)) return v.fields.get("channel") as string;
  throw fail(
    "type_error",
    `${what} expects a channel name (str), found ${typeName(v)}`,
    null,
    span,
  );
}

const FALLBACK = new Set([...RECORD_METHOD_NAMES, ...UNIVERSAL_METHOD_NAMES]);

function timeoutLabel(t: Value | undefined): string {
  return t instanceof DurationV ? formatDuration(t.ns) : "";
}

function channelMethod(
  ev: Evaluator,
  recv: RecordV,
  name: string,
  args: MethodArgs,
): Value | Promise<Value> | undefined {
  if (!isChannelHandle(recv)) return undefined;
  const ch = recv.fields.get("channel") as string;
  switch (name) {
    case "emit":
      arity("emit", args, 1, 1);
      return emit(ev, ch, args.pos[0]);
    case "latest":
      arity("latest", args, 0, 0);
      return busOf(ev).latest(ch);
    case "events": {
      arity("events", args, 0, 0, ["since"]);
      const since = args.named.get("since");
      if (since !== undefined && since !== null && !isInt(since)) {
        throw fail(
          "type_error",
          `.events since: expects an int sequence number, found ${typeName(since)}`,
          null,
          args.span,
        );
      }
      const cursor = since === undefined || since === null ? null : Number(since);
      return mkStream("event", false, busOf(ev).subscribe(ch, cursor));
    }
    case "take": {
      arity("take", args, 0, 0, ["timeout"]);
      const t = args.named.get("timeout");
      let ms: number | null = null;
      if (t !== undefined && t !== null) {
        if (!(t instanceof DurationV)) {
          throw fail(
            "type_error",
            `.take timeout: expects a duration, found ${typeName(t)}`,
            null,
            args.span,
          );
        }
        if (t.ns < 0n) {
          throw fail("arg_error", ".take timeout: must not be negative", null, args.span);
        }
        ms = Number(t.ns) / 1e6;
      }
      // A host cancel, or cancelling the task this runs in, ends the wait at once.
      const task = currentTask();
      const ctl = new AbortController();
      const unhook = task?.onCancel(() => ctl.abort());
      return ev.withCancelSignal((host) => {
        host?.addEventListener("abort", () => ctl.abort(), { once: true });
        return busOf(ev).take(ch, ms, timeoutLabel(t), ctl.signal);
      }).finally(() => unhook?.());
    }
  }
  if (FALLBACK.has(name)) return undefined; // plain record methods still work on the handle
  throw fail(
    "field_missing",
    `unknown channel method \`.${name}\``,
    "channels have .emit(v), .events(since: n), .latest() and .take(timeout: d)",
    args.span,
  );
}

installHooks({
  channelMethod,
  injectUserEvent: (ev, name, payload) => {
    busOf(ev).publish(name, payload);
  },
  closeChannels: (ev) => busOf(ev).close(),
});

channelEmitter.emit = (ip: Interp, name: string, payload: Value) => {
  emit(ip as Evaluator, name, payload);
};

registerCallForm(
  "channel",
  doc(
    "channel(name: str) -> channel",
    "a session channel: .emit(v), .events(), .latest(), .take()",
    (_ev, a) => {
      checkNamed("channel", a);
      if (a.pos.length !== 1) {
        throw fail("arg_error", `channel expects 1 argument, got ${a.pos.length}`, null, a.span);
      }
      const v = a.pos[0];
      if (typeof v !== "string") {
        throw fail("type_error", `channel expects a str name, found ${typeName(v)}`, null, a.span);
      }
      return channelHandle(v);
    },
  ),
);

/**
 * `on(channel, handler)`: subscribe now (live: events published from this call on — the
 * subscription exists before the task starts, so none is lost in between), then run the
 * handler for every event in a task.
 */
registerCallForm(
  "on",
  doc("on(channel, handler) -> task", "run handler for every event on channel", (ev, a) => {
    checkNamed("on", a);
    if (a.pos.length !== 2) {
      throw fail(
        "arg_error",
        `on expects 2 arguments (channel, handler), got ${a.pos.length}`,
        null,
        a.span,
      );
    }
    const name = channelName(a.pos[0], "on", a.span);
    const handler = a.pos[1];
    if (!isCallable(handler)) {
      throw fail(
        "type_error",
        `on expects a handler function, found ${typeName(handler)}`,
        null,
        a.span,
      );
    }
    const src = busOf(ev).subscribe(name, "live");
    // Cancel releases the subscription; suspend holds the handler at its next event while events
    // keep queueing (bounded, with `{dropped: n}` markers) — see tasks.ts.
    return ev.spawnTask(
      `on(${name})`,
      () => then(drain(ev, src, (x) => then(ev.callValue(handler, [x]), () => true)), () => null),
    );
  }),
);
