/**
 * Channels through the real evaluator: emit/latest/events/since/take, `on` handler tasks with
 * cancel and suspend/resume, `into`, the bounded subscriber queue, bus close, and the kernel
 * bridge hooks (`onUserEmit` / `injectUserEvent`, no echo).
 */

import assert from "node:assert/strict";
import { busOf, RING_CAPACITY, SUBSCRIBER_CAPACITY } from "../../../lib/eval/channels/mod.ts";
import { ListV, type RecordV, type Value } from "../../../lib/value/types.ts";
import { ShoalError } from "../../../lib/value/errors.ts";
import { fails, newEv, run, table, value } from "./_host.ts";

Deno.test("channel handles, emit, latest, events and since", async () => {
  await table([
    ['channel("a")', '{channel: "a"}'],
    ['channel("a").emit(1)', "null"],
    ['channel("b").emit(1)\nchannel("b").emit(2)\nchannel("b").latest()', "2"],
    ['channel("nope").latest()', "null"],
    [
      'channel("z").emit("a")\nchannel("z").emit("b")\nchannel("z").events().map(.payload).take(2).collect()',
      '["a", "b"]',
    ],
    [
      'for x in [10, 20, 30] { channel("c").emit(x) }\nchannel("c").events(since: 0).map(.payload).take(2).collect()',
      "[20, 30]",
    ],
    [
      'channel("s").emit("x")\nchannel("s").emit("y")\nchannel("s").events().take(2).map(.seq).collect()',
      "[0, 1]",
    ],
    [
      'channel("q").emit(42)\nchannel("q").events().take(1).map(e => [e.channel, e.seq, e.payload, e.ts > t"2020-01-01"]).first()',
      '["q", 0, 42, true]',
    ],
    ['channel("q").events()', "stream<event>"],
    ['[7, 8, 9].stream().into(channel("m"))\nchannel("m").latest()', "9"],
    [
      '[1, 2].stream().into(channel("m"))\nchannel("m").events().map(.payload).take(2).collect()',
      "[1, 2]",
    ],
    ['{channel: "k"}.emit(3)\nchannel("k").latest()', "3"],
    ['{channel: "k", x: 1}.keys()', '["channel", "x"]'],
    ['channel("k").keys()', '["channel"]'],
  ]);
  await fails('channel("x").events().collect()', "stream_unbounded");
  await fails('channel("x").frobnicate()', "field_missing", "unknown channel method");
  await fails("channel(5)", "type_error");
  await fails("channel()", "arg_error");
  await fails('channel("x").emit()', "arg_error");
  await fails('channel("x").events(since: "a")', "type_error");
  await fails('channel("x").take(timeout: 5)', "type_error");
});

Deno.test("the replay ring keeps the newest 1,024 events", async () => {
  const n = RING_CAPACITY + 76;
  const src = `for i in 0..${n} { channel("r").emit(i) }\n` +
    `channel("r").events().take(${RING_CAPACITY}).map(.seq).collect()`;
  const v = await value(src);
  assert.ok(v instanceof ListV);
  assert.equal(v.items.length, RING_CAPACITY);
  assert.equal(v.items[0], 76);
  assert.equal(v.items[RING_CAPACITY - 1], n - 1);
});

Deno.test("take waits for a future payload; timeout; channel_closed", async () => {
  // Emitted before take → not seen.
  await fails('channel("t").emit(1)\nchannel("t").take(timeout: 20ms)', "timeout", "20ms");
  // A task emits later.
  assert.equal(
    await run(
      'spawn { every(5ms).take(1).each(t => channel("t").emit(5)) }\nchannel("t").take(timeout: 2s)',
    ),
    "5",
  );
  // The bus closes while waiting (no timeout).
  const ev = newEv();
  const pending = ev.evalSource('channel("w").take()');
  setTimeout(() => ev.closeChannels(), 10);
  await assert.rejects(
    Promise.resolve(pending),
    (e) => e instanceof ShoalError && e.err.code === "channel_closed",
  );
  await fails('channel("w").take(timeout: 1s)', "channel_closed", undefined, ev);
  // Live events() streams end when the bus closes.
  const ev2 = newEv();
  const p2 = ev2.evalSource('channel("w").emit(1)\nchannel("w").events().each(e => e)');
  setTimeout(() => ev2.closeChannels(), 10);
  assert.equal(await p2, null);
});

Deno.test("on(channel, handler) runs a task; cancel ends it; suspend/resume", async () => {
  const ev = newEv();
  assert.equal(
    await run(
      'let t = on(channel("in"), e => channel("out").emit(e.payload * 2))\n' +
        'channel("in").emit(21)\nchannel("out").take(timeout: 1s)',
      ev,
    ),
    "42",
  );
  assert.equal(busOf(ev).subscriberCount("in"), 1);
  assert.equal(await run("t.is_done()", ev), "false");
  assert.equal(await run('jobs.where(.desc == "on(in)").len()', ev), "1");
  // suspend: events wait; resume: they are handled.
  assert.equal(await run("t.suspend().is_suspended()", ev), "true");
  await run('channel("in").emit(1)', ev);
  await fails('channel("out").take(timeout: 30ms)', "timeout", undefined, ev);
  const later = ev.evalSource('channel("out").take(timeout: 1s)');
  assert.equal(await run("t.resume().is_suspended()", ev), "false");
  assert.equal(await later, 2);
  assert.equal(await run("t.is_suspended()", ev), "false");
  assert.equal(await run("t.cancel()", ev), "null");
  assert.equal(await run("try { t.await() } catch e { e.code }", ev), '"cancelled"');
  assert.equal(await run("t.is_done()", ev), "true");
  assert.equal(busOf(ev).subscriberCount("in"), 0);
  await fails('on(channel("x"), 5)', "type_error");
  await fails('on("x")', "arg_error");
  assert.equal(await run('on("named", e => e).cancel()'), "null");
  // Handlers see events published after on(), not the replay ring.
  assert.equal(
    await run(
      'channel("h").emit("old")\nlet h = on("h", e => channel("seen").emit(e.payload))\n' +
        'channel("h").emit("new")\nchannel("seen").take(timeout: 1s)',
    ),
    '"new"',
  );
});

Deno.test("a slow consumer cannot make a channel grow: bounded queue + in-order marker", async () => {
  const ev = newEv();
  // Subscribe, then publish far more than the queue holds without consuming.
  await run('let s = channel("flood").events()', ev);
  const total = 10_000;
  await run(`for i in 0..${total} { channel("flood").emit(i) }`, ev);
  const bus = busOf(ev);
  assert.equal(bus.subscriberCount("flood"), 1);
  // What the slow consumer sees: one marker for everything dropped, then the newest 256, in order.
  const got = await value(`s.take(${SUBSCRIBER_CAPACITY + 1}).collect()`, ev);
  assert.ok(got instanceof ListV);
  const marker = got.items[0] as RecordV;
  assert.equal(marker.fields.get("dropped"), total - SUBSCRIBER_CAPACITY);
  const seqs = got.items.slice(1).map((e) => (e as RecordV).fields.get("seq"));
  assert.equal(seqs.length, SUBSCRIBER_CAPACITY);
  assert.equal(seqs[0], total - SUBSCRIBER_CAPACITY);
  assert.equal(seqs[SUBSCRIBER_CAPACITY - 1], total - 1);
  // The consumer finished (take) → unsubscribed.
  assert.equal(bus.subscriberCount("flood"), 0);
});

Deno.test("kernel bridge: user.* emits go out, injected events come in without echo", async () => {
  const ev = newEv();
  const out: [string, Value][] = [];
  ev.onUserEmit = (ch, p) => void out.push([ch, p]);
  await run(
    'channel("user.a").emit(1)\nchannel("build").emit(2)\n[3].stream().into(channel("user.b"))',
    ev,
  );
  assert.deepEqual(out, [["user.a", 1], ["user.b", 3]]);
  ev.injectUserEvent("user.a", "from kernel");
  assert.equal(await run('channel("user.a").latest()', ev), '"from kernel"');
  assert.equal(
    await run('channel("user.a").events(since: 0).map(.payload).take(1).first()', ev),
    '"from kernel"',
  );
  assert.equal(out.length, 2, "an injected event must not be forwarded back");
  // Injected events wake waiting takes and subscribers.
  const p = ev.evalSource('channel("user.c").take(timeout: 1s)');
  ev.injectUserEvent("user.c", 7);
  assert.equal(await p, 7);
  // A throwing bridge does not break the emit.
  ev.onUserEmit = () => {
    throw new Error("bridge down");
  };
  assert.equal(await run('channel("user.d").emit(1)\nchannel("user.d").latest()', ev), "1");
});

Deno.test("spawned tasks: suspend holds them at their next wait, cancel stops them", async () => {
  const ev = newEv();
  await run('let t = spawn { every(5ms).each(x => channel("tick").emit(1)) }', ev);
  assert.equal(await run('channel("tick").take(timeout: 1s)', ev), "1");
  assert.equal(await run("t.suspend().is_suspended()", ev), "true");
  assert.equal(await run("jobs.where(.suspended).len()", ev), "1");
  await fails('channel("tick").take(timeout: 60ms)', "timeout", undefined, ev);
  assert.equal(await run("t.resume().is_suspended()", ev), "false");
  assert.equal(await run('channel("tick").take(timeout: 1s)', ev), "1");
  assert.equal(await run("t.cancel()", ev), "null");
  assert.equal(await run("try { t.await() } catch e { e.code }", ev), '"cancelled"');
  assert.equal(await run("t.is_done()", ev), "true");
  await fails('channel("tick").take(timeout: 40ms)', "timeout", undefined, ev);
  // A task blocked on channel take is released by cancel.
  await run('let w = spawn { channel("never").take() }', ev);
  await run("w.cancel()", ev);
  assert.equal(await run("try { w.await() } catch e { e.code }", ev), '"cancelled"');
  // Cancelling one task leaves the others running; a finished task ignores cancel/suspend.
  await run("let a = spawn { every(5ms).take(3).collect().len() }\nlet b = spawn { 1 }", ev);
  assert.equal(await run("b.await()\nb.cancel()\nb.suspend().is_suspended()", ev), "false");
  assert.equal(await run("a.await()", ev), "3");
  await fails("a.suspend(1)", "arg_error", undefined, ev);
  // wait() is await(): the value, or the task's error re-raised.
  assert.equal(await run("spawn { 41 + 1 }.wait()", ev), "42");
  await fails("spawn { 1 / 0 }.wait()", "div_zero", undefined, ev);
  await fails("spawn { 1 }.wait(1)", "arg_error", undefined, ev);
  await fails("spawn { 1 }.cancel(1)", "arg_error", undefined, ev);
});

Deno.test("an abandoned events() stream is unsubscribed once collected", async () => {
  // Needs a collectable heap: run the check in a child Deno with --expose-gc.
  const bus = new URL("../../../lib/eval/channels/bus.ts", import.meta.url).href;
  const code = `
    import { ChannelBus } from "${bus}";
    const clock = { nowNs: () => 0n, zone: () => "UTC", sleep: () => Promise.resolve() };
    const b = new ChannelBus(clock);
    for (let i = 0; i < 50; i++) b.subscribe("gc", null);
    const kept = b.subscribe("gc", null);
    const before = b.subscriberCount("gc");
    for (let i = 0; i < 20 && b.subscriberCount("gc") > 1; i++) {
      globalThis.gc();
      await new Promise((r) => setTimeout(r, 10));
    }
    b.publish("gc", 1);
    console.log(JSON.stringify([before, b.subscriberCount("gc"), kept.pull() !== undefined]));
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--expose-gc", code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  assert.ok(out.success, err);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), [51, 1, true]);
});
