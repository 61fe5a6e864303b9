/**
 * Live sources and timed stages through the real evaluator: `every` (validation, ticks,
 * coalescing under a pinned clock), live `tee` with bounded fork queues, timed combinators,
 * `watch`, `tail`, and the guarantee that waiting stages never block the thread.
 */

import assert from "node:assert/strict";
import type { ClockPort } from "../../../lib/eval/ports.ts";
import { DateTimeV, ListV, RecordV, type Value } from "../../../lib/value/types.ts";
import { fails, newEv, run, value } from "./_host.ts";
import { ShoalError } from "../../../lib/value/errors.ts";

/** A pinned clock: time moves only when a sleep completes (by exactly the slept amount). */
class SteppingClock implements ClockPort {
  t = 1_700_000_000_000_000_000n;
  sleeps = 0;
  nowNs(): bigint {
    return this.t;
  }
  zone(): string {
    return "UTC";
  }
  sleep(ms: number): Promise<void> {
    this.sleeps++;
    return Promise.resolve().then(() => {
      this.t += BigInt(Math.round(ms * 1e6));
    });
  }
}

function ns(v: Value): bigint {
  assert.ok(v instanceof DateTimeV);
  return v.ns;
}

Deno.test("every: validation, label, ticks one interval apart", async () => {
  await fails("every(0s)", "arg_error", "positive interval");
  await fails("every(-1s)", "type_error");
  await fails("every(5)", "type_error");
  await fails("every()", "arg_error");
  assert.equal(await run("every(1s)"), "stream<datetime>");
  const clock = new SteppingClock();
  const t0 = clock.t;
  const v = await value("every(1s).take(3).collect()", newEv({ ports: { clock } }));
  assert.ok(v instanceof ListV);
  assert.deepEqual(v.items.map(ns), [
    t0 + 1_000_000_000n,
    t0 + 2_000_000_000n,
    t0 + 3_000_000_000n,
  ]);
});

Deno.test("every: a slow consumer gets the earliest missed tick, the rest coalesce", async () => {
  const clock = new SteppingClock();
  const ev = newEv({ ports: { clock } });
  const t0 = clock.t;
  await run("let s = every(1s)", ev);
  clock.t += 5_500_000_000n; // the consumer was busy for 5.5 intervals
  const v = await value("s.take(2).collect()", ev);
  assert.ok(v instanceof ListV);
  // The stale first tick (due at +1s) at once, then the first tick after "now" (+6s).
  assert.deepEqual(v.items.map(ns), [t0 + 1_000_000_000n, t0 + 6_000_000_000n]);
});

Deno.test("every on the real clock: waits asynchronously, the thread keeps running", async () => {
  const ev = newEv();
  let ticks = 0;
  const iv = setInterval(() => ticks++, 2);
  const started = performance.now();
  const p = ev.evalSource("every(20ms).take(5).map(t => t.year > 2000).collect()");
  assert.ok(p instanceof Promise, "a timer-driven stream must not block");
  const v = await p;
  clearInterval(iv);
  const took = performance.now() - started;
  assert.equal(String((v as ListV).items), "true,true,true,true,true");
  assert.ok(took >= 90, `5 ticks of 20ms took ${took}ms`);
  assert.ok(ticks >= 10, `other timers ran only ${ticks} times while the stream waited`);
});

Deno.test("live tee: independent forks; a lagging fork gets an in-order dropped marker", async () => {
  assert.equal(await run("every(1ms).tee(2)[0].take(2).collect().len()"), "2");
  assert.equal(
    await run(
      "let t = every(1ms).tee(2)\n[t[0].take(2).collect().len(), t[1].take(2).collect().len()]",
    ),
    "[2, 2]",
  );
  const clock = new SteppingClock();
  const ev = newEv({ ports: { clock } });
  const t0 = clock.t;
  await run("let t = every(1s).tee(2)\nlet a = t[0].take(100).collect()", ev);
  const lag = await value("t[1].take(3).collect()", ev);
  assert.ok(lag instanceof ListV);
  const marker = lag.items[0] as RecordV;
  assert.equal(marker.fields.get("dropped"), 100 - 64);
  // After the marker, the oldest kept item: tick 37 of 100.
  assert.equal(ns(lag.items[1]), t0 + 37_000_000_000n);
  assert.equal(ns(lag.items[2]), t0 + 38_000_000_000n);
});

Deno.test("timed stages on a live source", async () => {
  // debounce: ticks every 5ms never leave a 60ms quiet gap → only the last survives.
  assert.equal(await run("every(5ms).take(6).debounce(60ms).collect().len()"), "1");
  // throttle: 20 ticks over ~100ms, at most one per 30ms.
  const th = Number(await run("every(5ms).take(20).throttle(30ms).collect().len()"));
  assert.ok(th >= 2 && th <= 5, `throttle kept ${th}`);
  // window(duration): all 12 items arrive, grouped in a few windows.
  const w = await value("every(5ms).take(12).window(25ms).collect()");
  assert.ok(w instanceof ListV);
  const sizes = w.items.map((x) => (x as ListV).items.length);
  assert.equal(sizes.reduce((a, b) => a + b, 0), 12);
  assert.ok(sizes.length >= 2 && sizes.length <= 7, `windows ${sizes}`);
  // merge: both live sources contribute.
  assert.equal(
    await run(
      'every(4ms).take(3).map(t => "a").merge(every(6ms).take(3).map(t => "b")).collect().sort()',
    ),
    '["a", "a", "a", "b", "b", "b"]',
  );
  // take_until(stream): a fast timer stopped by a slow one.
  const tu = Number(await run("every(5ms).take_until(every(40ms)).take(100).collect().len()"));
  assert.ok(tu >= 2 && tu <= 8, `take_until kept ${tu}`);
  // zip pairs a live source with a finite one.
  assert.equal(await run("every(1ms).zip([1, 2].stream()).map(p => p[1]).collect()"), "[1, 2]");
  // flat_map over a live source with bounded inner streams.
  assert.equal(
    await run("every(1ms).take(2).flat_map(t => [1, 2].stream()).collect()"),
    "[1, 2, 1, 2]",
  );
});

Deno.test("watch: filesystem events, glob filtering, errors", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "shoal-watch-" });
  const ev = newEv({ cwd: dir });
  await run('let w = watch(".")\nlet g = watch(glob("*.log"))', ev);
  Deno.writeTextFileSync(`${dir}/a.txt`, "x");
  Deno.writeTextFileSync(`${dir}/b.log`, "y");
  const e = await value('w.where(e => e.kind == "created").take(1).first()', ev);
  assert.ok(e instanceof RecordV);
  assert.deepEqual([...e.fields.keys()], ["path", "kind", "ts"]);
  assert.match(String((e.fields.get("path") as { path: string }).path), /a\.txt$/);
  const logs = await value("g.take(1).map(e => e.path).first()", ev);
  assert.match(String((logs as { path: string }).path), /b\.log$/);
  assert.equal(await run('watch(".")', ev), "stream<event>");
  await fails('watch("no/such/dir")', "io_error", "watch", ev);
  await fails("watch(5)", "type_error");
  await fails('watch(".", recursive: 1)', "type_error", undefined, ev);
});

Deno.test("tail: new complete lines, from_start, partial lines, truncation", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "shoal-tail-" });
  const ev = newEv({ cwd: dir });
  const f = `${dir}/app.log`;
  Deno.writeTextFileSync(f, "old\n");
  await run('let t = tail("app.log")\nlet s = tail("app.log", from_start: true)', ev);
  setTimeout(() => Deno.writeTextFileSync(f, "new1\npar", { append: true }), 10);
  setTimeout(() => Deno.writeTextFileSync(f, "tial\n", { append: true }), 60);
  assert.equal(await run("t.take(2).collect()", ev), '["new1", "partial"]');
  assert.equal(await run("s.take(3).collect()", ev), '["old", "new1", "partial"]');
  // Truncation restarts at the beginning.
  await run('let r = tail("app.log")', ev);
  setTimeout(() => Deno.writeTextFileSync(f, "fresh\n"), 10);
  assert.equal(await run("r.take(1).collect()", ev), '["fresh"]');
  assert.equal(await run('tail("app.log")', ev), "stream<str>");
  await fails('tail("missing.log")', "io_error", "tail", ev);
  await fails('tail("app.log", from_start: "yes")', "type_error", undefined, ev);
});

Deno.test("a host cancel ends a stream or channel wait at once", async () => {
  for (
    const src of [
      "every(1h).each(t => t)",
      'channel("quiet").take()',
      "every(1h).take(1).collect()",
    ]
  ) {
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const ev = newEv({ cancel: flag });
    const started = performance.now();
    const p = Promise.resolve(ev.evalSource(src));
    // The host (here: this test) is what keeps the process alive while the program waits.
    const keepAlive = setInterval(() => {}, 10);
    setTimeout(() => (flag[0] = 1), 20);
    try {
      await assert.rejects(p, (e) => e instanceof ShoalError && e.err.code === "cancelled", src);
    } finally {
      clearInterval(keepAlive);
    }
    const took = performance.now() - started;
    assert.ok(took < 1000, `${src}: cancel took ${took}ms`);
  }
});

Deno.test("every stage also works over an asynchronous source and async callbacks", async () => {
  // `src(list)` yields the list's items one timer tick apart.
  const src = (items: string) =>
    `every(1ms).take(${items.split(",").length}).enumerate().map(p => ${
      items ? `[${items}]` : "[]"
    }[p[0]])`;
  const cases: [string, string][] = [
    [`${src("1, 2, 3, 4")}.where(x => x % 2 == 0).collect()`, "[2, 4]"],
    [`${src("1, 2, 3")}.scan(0, (a, x) => a + x).collect()`, "[1, 3, 6]"],
    [`${src("1, 2")}.flat_map(x => [x, x]).collect()`, "[1, 1, 2, 2]"],
    [`${src("1, 2")}.flat_map(x => ${src("7, 8")}).collect()`, "[7, 8, 7, 8]"],
    [`${src("1, 2, 3, 4")}.skip(2).collect()`, "[3, 4]"],
    [`${src("1, 2, 3, 4")}.take_until(x => x == 3).collect()`, "[1, 2]"],
    [`${src("1, 1, 2, 2, 1")}.dedupe().collect()`, "[1, 2, 1]"],
    [`${src("1, 1, 2, 2, 1")}.distinct().collect()`, "[1, 2]"],
    [`${src("5, 6")}.enumerate().collect()`, "[[0, 5], [1, 6]]"],
    [`${src("1, 2, 3")}.window(2).collect()`, "[[1, 2], [2, 3]]"],
    [`${src("1, 2, 3")}.zip(${src("4, 5")}).collect()`, "[[1, 4], [2, 5]]"],
    [`${src("1, 2")}.merge(${src("3")}).collect().sort()`, "[1, 2, 3]"],
    [`${src("1, 2, 3")}.debounce(0s).collect()`, "[1, 2, 3]"],
    [`${src("1, 2, 3")}.first()`, "1"],
    [`${src("1, 2, 3")}.find(x => x > 1)`, "2"],
    [`${src("1, 2, 3")}.sum()`, "6"],
    [`${src("1, 2, 3")}.tee(2).map(s => s.len())`, "[3, 3]"],
    // Callbacks that wait (each item waits for a timer of its own).
    [
      `[1, 2, 3].stream().map(x => every(1ms).take(1).map(t => x * 10).first()).collect()`,
      "[10, 20, 30]",
    ],
    [
      `[1, 2, 3].stream().where(x => every(1ms).take(1).map(t => x != 2).first()).collect()`,
      "[1, 3]",
    ],
    [`[1, 2].stream().flat_map(x => every(1ms).take(1).map(t => [x]).first()).collect()`, "[1, 2]"],
    [
      `[1, 2, 3].stream().take_until(x => every(1ms).take(1).map(t => x == 2).first()).collect()`,
      "[1]",
    ],
    [
      `[1, 2].stream().scan(0, (a, x) => every(1ms).take(1).map(t => a + x).first()).collect()`,
      "[1, 3]",
    ],
  ];
  for (const [source, want] of cases) assert.equal(await run(source), want, source);
  // Errors raised after a wait surface as language errors.
  await fails(`${src("1, 2")}.map(x => x / 0).collect()`, "div_zero");
  await fails(`${src("1, 2")}.where(x => 5).collect()`, "type_error");
});
