import assert from "node:assert/strict";
import { join } from "node:path";
import { blake3Hex, BLOB_READ_CAP, ContentStore, parseRef, toRef } from "../../lib/store/mod.ts";
import { chunked, randomBytes, rejectsCode, throwsCode, utf8, withTempDir } from "./_helpers.ts";

const ABC = "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85";
const TEXT = utf8("a line of log output that compresses well\n".repeat(5000));

async function withCas<T>(fn: (cas: ContentStore, dir: string) => Promise<T>): Promise<T> {
  return await withTempDir(async (dir) => fn(await ContentStore.open(join(dir, "cas")), dir));
}

async function tempFiles(cas: ContentStore): Promise<string[]> {
  const out: string[] = [];
  for await (const t of cas.listTemps()) out.push(t.path);
  return out;
}

/** Flip one byte of a file in place (keeps its size). */
async function flipByte(path: string, at: number): Promise<void> {
  const b = await Deno.readFile(path);
  b[at] ^= 0xff;
  await Deno.writeFile(path, b);
}

Deno.test("blake3 backend matches the published 'abc' vector", async () => {
  assert.equal(await blake3Hex("abc"), ABC);
});

Deno.test("refs: val:blake3:, blake3: and bare hex parse; bad refs are bad_ref", () => {
  assert.equal(parseRef(`val:blake3:${ABC}`), ABC);
  assert.equal(parseRef(`blake3:${ABC.toUpperCase()}`), ABC);
  assert.equal(toRef(ABC), `val:blake3:${ABC}`);
  throwsCode(() => parseRef("val:blake3:xyz"), "bad_ref");
  throwsCode(() => parseRef(ABC.slice(1)), "bad_ref");
  throwsCode(() => parseRef("../../etc/passwd"), "bad_ref");
});

Deno.test("put stores at cas/<hh>/<rest>, get returns the bytes, a second put is a no-op", async () => {
  await withCas(async (cas) => {
    const r = await cas.put(utf8("abc"));
    assert.equal(r.hash, ABC);
    assert.equal(r.ref, `val:blake3:${ABC}`);
    assert.equal(r.size, 3);
    assert.equal(r.created, true);
    assert.equal((await Deno.stat(join(cas.dir, ABC.slice(0, 2), ABC.slice(2)))).isFile, true);
    assert.deepEqual(await cas.get(r.ref), utf8("abc"));
    const again = await cas.put(utf8("abc"));
    assert.equal(again.created, false);
    assert.equal(again.hash, ABC);
    assert.equal(await cas.has(ABC), true);
    assert.equal(await cas.has("0".repeat(64)), false);
    assert.equal(await cas.stat("0".repeat(64)), null);
    assert.deepEqual(await tempFiles(cas), []);
  });
});

Deno.test("empty content is a valid blob", async () => {
  await withCas(async (cas) => {
    const r = await cas.put(new Uint8Array(0));
    assert.equal(r.hash, await blake3Hex(new Uint8Array(0)));
    assert.deepEqual(await cas.get(r.hash), new Uint8Array(0));
    assert.equal((await cas.getRange(r.hash, 0, 10)).data.length, 0);
  });
});

Deno.test("compression: auto compresses text with zstd, leaves random bytes raw; all codecs round-trip", async () => {
  await withCas(async (cas) => {
    const text = await cas.put(TEXT);
    assert.equal(text.codec, "zstd");
    assert.ok(text.storedSize < TEXT.length / 10);
    const rnd = randomBytes(200_000);
    const raw = await cas.put(rnd);
    assert.equal(raw.codec, "none");
    assert.equal(raw.storedSize, rnd.length + 16);
    assert.deepEqual(await cas.get(text.hash), TEXT);
    assert.deepEqual(await cas.get(raw.hash), rnd);
    for (const compression of ["none", "zstd", "deflate-raw"] as const) {
      const data = utf8(`${compression} `.repeat(3000));
      const r = await cas.put(data, { compression });
      assert.equal(r.codec, compression);
      // the address is the hash of the logical bytes, whatever the codec
      assert.equal(r.hash, await blake3Hex(data));
      assert.deepEqual(await cas.get(r.hash), data);
      const st = await cas.stat(r.hash);
      assert.equal(st?.codec, compression);
      assert.equal(st?.size, data.length);
    }
    await rejectsCode(cas.put(TEXT, { compression: "lz4" as never }), "invalid_input");
  });
});

Deno.test("putStream hashes and writes chunk by chunk; equals put of the same bytes", async () => {
  await withCas(async (cas) => {
    const data = new Uint8Array(3 * 1024 * 1024 + 17);
    data.set(randomBytes(1024 * 1024), 0);
    data.set(TEXT.subarray(0, 1024 * 1024), 2 * 1024 * 1024);
    const s = await cas.putStream(chunked(data, 100_000));
    assert.equal(s.hash, await blake3Hex(data));
    assert.equal(s.size, data.length);
    assert.equal(s.created, true);
    assert.deepEqual(await cas.get(s.hash), data);
    const again = await cas.putStream(chunked(data, 7777));
    assert.equal(again.created, false);
    const compressed = await cas.putStream(chunked(TEXT, 1000), { compression: "zstd" });
    assert.equal(compressed.codec, "zstd");
    assert.deepEqual(await cas.get(compressed.hash), TEXT);
    assert.deepEqual(await tempFiles(cas), []);
  });
});

Deno.test("putStream: maxBytes refuses an over-long stream and leaves no temp file", async () => {
  await withCas(async (cas) => {
    let cancelled = false;
    const data = randomBytes(300_000);
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (at >= data.length) return ctl.close();
        ctl.enqueue(data.slice(at, at + 10_000));
        at += 10_000;
      },
      cancel() {
        cancelled = true;
      },
    });
    await rejectsCode(cas.putStream(stream, { maxBytes: 100_000 }), "blob_too_large");
    assert.equal(cancelled, true, "the source stream is cancelled");
    assert.deepEqual(await tempFiles(cas), []);
    let count = 0;
    for await (const _ of cas.listBlobs()) count++;
    assert.equal(count, 0);
  });
});

Deno.test("putStream rejects non-byte chunks and failing sources without leaving files", async () => {
  await withCas(async (cas) => {
    const bad = new ReadableStream({
      start(ctl) {
        ctl.enqueue("a string");
        ctl.close();
      },
    }) as unknown as ReadableStream<Uint8Array>;
    await rejectsCode(cas.putStream(bad), "invalid_input");
    const failing = new ReadableStream<Uint8Array>({
      start(ctl) {
        ctl.enqueue(randomBytes(70_000));
        ctl.error(new Error("producer died"));
      },
    });
    await rejectsCode(cas.putStream(failing), "io_error");
    assert.deepEqual(await tempFiles(cas), []);
    await rejectsCode(cas.putStream("nope" as never), "invalid_input");
  });
});

Deno.test("putFile streams a file; a missing file is io_error", async () => {
  await withCas(async (cas, dir) => {
    const p = join(dir, "input.bin");
    const data = randomBytes(1_500_000);
    await Deno.writeFile(p, data);
    const r = await cas.putFile(p);
    assert.equal(r.hash, await blake3Hex(data));
    assert.deepEqual(await cas.get(r.ref), data);
    await rejectsCode(cas.putFile(join(dir, "missing")), "io_error");
    await rejectsCode(cas.putFile(dir), "invalid_input");
  });
});

Deno.test("get: unknown hash is blob_not_found, bad ref is bad_ref, over the cap is blob_too_large", async () => {
  await withCas(async (cas) => {
    await rejectsCode(cas.get("f".repeat(64)), "blob_not_found");
    await rejectsCode(cas.get("not-a-hash"), "bad_ref");
    const r = await cas.put(randomBytes(5000));
    const e = await rejectsCode(cas.get(r.hash, { maxBytes: 4999 }), "blob_too_large");
    assert.equal(e.details?.size, 5000);
    await rejectsCode(cas.get(r.hash, { maxBytes: BLOB_READ_CAP + 1 }), "invalid_input");
    assert.equal((await cas.get(r.hash, { maxBytes: 5000 })).length, 5000);
  });
});

Deno.test("a blob bigger than the 16 MiB cap is only readable in ranges", async () => {
  await withCas(async (cas) => {
    const big = new Uint8Array(BLOB_READ_CAP + 1000);
    big.set(randomBytes(2000), BLOB_READ_CAP - 1000);
    const r = await cas.putStream(chunked(big, 1 << 20), { compression: "none" });
    await rejectsCode(cas.get(r.hash), "blob_too_large");
    const tail = await cas.getRange(r.hash, BLOB_READ_CAP - 1000, 5000);
    assert.equal(tail.size, big.length);
    assert.deepEqual(tail.data, big.subarray(BLOB_READ_CAP - 1000));
    await rejectsCode(cas.getRange(r.hash, 0, BLOB_READ_CAP + 1), "blob_too_large");
  });
});

Deno.test("getRange: raw and compressed blobs, clamped at the end, bad ranges refused", async () => {
  await withCas(async (cas) => {
    const rnd = randomBytes(1_000_000);
    const raw = await cas.put(rnd);
    const comp = await cas.put(TEXT, { compression: "zstd" });
    const defl = await cas.put(TEXT, { compression: "deflate-raw" });
    assert.equal(comp.hash, defl.hash); // same content, same address
    for (let round = 0; round < 2; round++) { // second round uses the verified cache
      const a = await cas.getRange(raw.hash, 123_456, 1000);
      assert.deepEqual(a.data, rnd.subarray(123_456, 124_456));
      assert.equal(a.offset, 123_456);
      assert.equal(a.size, rnd.length);
      const b = await cas.getRange(comp.hash, 100_001, 333);
      assert.deepEqual(b.data, TEXT.subarray(100_001, 100_334));
      const end = await cas.getRange(raw.hash, rnd.length - 10, 1000);
      assert.deepEqual(end.data, rnd.subarray(rnd.length - 10));
      assert.equal((await cas.getRange(raw.hash, rnd.length, 5)).data.length, 0);
    }
    await rejectsCode(cas.getRange(raw.hash, rnd.length + 1, 1), "bad_range");
    await rejectsCode(cas.getRange(raw.hash, -1, 1), "invalid_input");
    await rejectsCode(cas.getRange(raw.hash, 0, 1.5), "invalid_input");
    await rejectsCode(cas.getRange("0".repeat(64), 0, 1), "blob_not_found");
  });
});

Deno.test("compressed blobs are framed: multi-frame round trip, ranges across frames, damaged frames refused", async () => {
  await withCas(async (cas) => {
    const big = new Uint8Array(3 * 1024 * 1024 + 12345);
    for (let o = 0; o < big.length; o += TEXT.length) big.set(TEXT.subarray(0, big.length - o), o);
    big.set(randomBytes(5000), 1024 * 1024 - 2500); // some entropy across the first frame edge
    for (const compression of ["zstd", "deflate-raw"] as const) {
      big[0] = compression.length; // distinct content per codec (else the second put dedupes)
      const r = await cas.putStream(chunked(big, 300_000), { compression });
      assert.equal(r.codec, compression);
      assert.ok(r.storedSize < big.length / 5);
      assert.deepEqual(await cas.get(r.hash), big);
      for (let round = 0; round < 2; round++) { // unverified pass, then frame skipping
        const edge = await cas.getRange(r.hash, 1024 * 1024 - 100, 200);
        assert.deepEqual(edge.data, big.subarray(1024 * 1024 - 100, 1024 * 1024 + 100));
        const tail = await cas.getRange(r.hash, big.length - 10, 100);
        assert.deepEqual(tail.data, big.subarray(big.length - 10));
        const mid = await cas.getRange(r.hash, 2 * 1024 * 1024 + 7, 1024 * 1024);
        assert.deepEqual(mid.data, big.subarray(2 * 1024 * 1024 + 7, 3 * 1024 * 1024 + 7));
      }
      const path = cas.pathOf(r.hash);
      const good = await Deno.readFile(path);
      // trailing garbage after the last frame
      await Deno.writeFile(path, new Uint8Array([...good, 1, 2, 3]));
      await rejectsCode(cas.get(r.hash), "blob_corrupt");
      // an impossible frame length in the first frame header
      const bad = good.slice();
      new DataView(bad.buffer).setUint32(16, 5 * 1024 * 1024, true);
      await Deno.writeFile(path, bad);
      await rejectsCode(cas.get(r.hash), "blob_corrupt");
      await rejectsCode(cas.getRange(r.hash, 0, 10), "blob_corrupt");
      // the file cut inside its last frame
      await Deno.writeFile(path, good.subarray(0, good.length - 5));
      await rejectsCode(cas.verify(r.hash), "blob_corrupt");
      await Deno.writeFile(path, good);
      await cas.verify(r.hash);
    }
  });
});

Deno.test("a byte flipped on disk is refused with blob_corrupt by get, getRange and verify", async () => {
  await withCas(async (cas) => {
    const rnd = randomBytes(100_000);
    const raw = await cas.put(rnd);
    // warm the verified cache first: the flip must still be caught
    await cas.getRange(raw.hash, 0, 10);
    await flipByte(cas.pathOf(raw.hash), 16 + 50_000);
    await rejectsCode(cas.get(raw.hash), "blob_corrupt");
    await rejectsCode(cas.getRange(raw.hash, 0, 10), "blob_corrupt");
    await rejectsCode(cas.verify(raw.hash), "blob_corrupt");

    const comp = await cas.put(TEXT, { compression: "zstd" });
    const st = await cas.stat(comp.hash);
    await flipByte(cas.pathOf(comp.hash), Math.floor((st!.storedSize + 16) / 2));
    await rejectsCode(cas.get(comp.hash), "blob_corrupt");
    await rejectsCode(cas.getRange(comp.hash, 5, 5), "blob_corrupt");

    const small = await cas.put(utf8("hello"));
    await flipByte(cas.pathOf(small.hash), 0); // header magic
    await rejectsCode(cas.get(small.hash), "blob_corrupt");
  });
});

Deno.test("a truncated blob is corrupt, and putting the content again repairs it", async () => {
  await withCas(async (cas) => {
    const rnd = randomBytes(50_000);
    const r = await cas.put(rnd);
    const path = cas.pathOf(r.hash);
    await Deno.truncate(path, 20_000);
    await rejectsCode(cas.get(r.hash), "blob_corrupt");
    const again = await cas.put(rnd);
    assert.equal(again.created, true, "a malformed file is replaced, not trusted");
    assert.deepEqual(await cas.get(r.hash), rnd);
  });
});

Deno.test("after a flipped byte is detected, putting the content again replaces the blob", async () => {
  await withCas(async (cas) => {
    for (const compression of ["none", "zstd"] as const) {
      const data = compression === "none" ? randomBytes(40_000) : TEXT;
      const r = await cas.put(data, { compression });
      const st = await cas.stat(r.hash);
      await flipByte(cas.pathOf(r.hash), Math.floor((st!.storedSize + 16) / 2));
      await rejectsCode(cas.get(r.hash), "blob_corrupt");
      const again = await cas.put(data, { compression });
      assert.equal(again.created, true, `${compression}: the damaged file is rewritten`);
      assert.deepEqual(await cas.get(r.hash), data);
      assert.equal((await cas.put(data)).created, false, "and is trusted again afterwards");
    }
  });
});

Deno.test("fsync: true puts are readable and leave no temp files", async () => {
  await withCas(async (cas, dir) => {
    const data = randomBytes(70_000);
    const r = await cas.put(data, { fsync: true });
    assert.deepEqual(await cas.get(r.hash), data);
    const p = join(dir, "f");
    await Deno.writeFile(p, TEXT);
    const f = await cas.putFile(p, { fsync: true });
    assert.deepEqual(await cas.get(f.hash), TEXT);
    assert.deepEqual(await tempFiles(cas), []);
  });
});

Deno.test("a second put refreshes the blob's mtime (GC ages by last put)", async () => {
  await withCas(async (cas) => {
    const r = await cas.put(utf8("age me"));
    const old = new Date(Date.now() - 86_400_000);
    await Deno.utime(cas.pathOf(r.hash), old, old);
    assert.ok((await cas.stat(r.hash))!.mtimeMs <= old.getTime());
    await cas.put(utf8("age me"));
    assert.ok((await cas.stat(r.hash))!.mtimeMs > old.getTime() + 1000);
  });
});

Deno.test("concurrent puts of the same content all succeed with one file", async () => {
  await withCas(async (cas) => {
    const data = randomBytes(400_000);
    const results = await Promise.all([
      cas.put(data),
      cas.putStream(chunked(data, 50_000)),
      cas.put(data),
      cas.putStream(chunked(data, 64_000)),
    ]);
    assert.equal(new Set(results.map((r) => r.hash)).size, 1);
    assert.deepEqual(await cas.get(results[0].hash), data);
    let n = 0;
    for await (const _ of cas.listBlobs()) n++;
    assert.equal(n, 1);
    assert.deepEqual(await tempFiles(cas), []);
  });
});

Deno.test("refresh marks a stored blob as just used; false when it is gone", async () => {
  const dir = await Deno.makeTempDir({ prefix: "shoal-cas-refresh-" });
  try {
    const cas = await ContentStore.open(dir);
    const r = await cas.put(new TextEncoder().encode("refresh me"));
    const path = cas.pathOf(r.hash);
    const old = new Date(Date.now() - 3_600_000);
    await Deno.utime(path, old, old);
    assert.equal(await cas.refresh(r.ref), true);
    assert.ok((Deno.statSync(path).mtime?.getTime() ?? 0) > Date.now() - 60_000);
    await Deno.remove(path);
    assert.equal(await cas.refresh(r.ref), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
