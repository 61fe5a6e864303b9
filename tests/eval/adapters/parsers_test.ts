/**
 * The twelve output parsers on canned output captured from the real tools on Debian 12 (git
 * 2.39, procps-ng 4, coreutils 9.1, util-linux 2.38, iproute2 6.1, sqlite 3.40, ripgrep 13,
 * docker 24) and variants from their manuals: empty output, unicode, and malformed output,
 * which must fail the whole parse (never a partial table).
 */

import { deepStrictEqual as assertEquals, ok as assert, throws } from "node:assert/strict";
import { parseHint } from "../../../lib/eval/adapters/hint.ts";
import { type OutputSpec, ParseFailure, parseOutput } from "../../../lib/eval/adapters/mod.ts";
import { renderInline } from "../../../lib/value/render.ts";
import { TableV, type Value } from "../../../lib/value/types.ts";

const enc = new TextEncoder();

function spec(parse: string, type?: string, unwrap?: string): OutputSpec {
  return { parse, hint: type === undefined ? null : parseHint(type), unwrap: unwrap ?? null };
}

function parse(s: OutputSpec, text: string | Uint8Array): Value | undefined {
  return parseOutput(s, typeof text === "string" ? enc.encode(text) : text);
}

/** Inline rendering of the parse (compact and exact: types show, `5kb` vs `5120`). */
function show(s: OutputSpec, text: string | Uint8Array): string {
  return renderInline(parse(s, text) as Value);
}

function fails(s: OutputSpec, text: string | Uint8Array, why?: RegExp): void {
  throws(() => parse(s, text), (e: unknown) => {
    assert(e instanceof ParseFailure, `expected a ParseFailure, got ${e}`);
    if (why) assert(why.test(e.message), `${e.message} !~ ${why}`);
    return true;
  });
}

const STATUS = spec("porcelain-v2", "table<{status: str, state: str, path: path, orig: path?}>");
const H40 = "2fa992c0b8b5c6acd2bdd4fa31de29d29799bdd5";
const Z40 = "0".repeat(40);

Deno.test("porcelain-v2: git status entries, -z and line forms", () => {
  // Captured: a modified file, a rename of a name with a space to a unicode name, untracked.
  const z = `1 .M N... 100644 100644 100644 ${H40} ${H40} a.txt\0` +
    `2 R. N... 100644 100644 100644 ${H40} ${H40} R100 renamed é.txt\0sp ace.txt\0` +
    "? d/\0? new.txt\0";
  assertEquals(
    show(STATUS, z),
    '[{status: ".M", state: "modified", path: a.txt, orig: null}, ' +
      '{status: "R.", state: "renamed", path: "renamed é.txt", orig: "sp ace.txt"}, ' +
      '{status: "?", state: "untracked", path: d/, orig: null}, ' +
      '{status: "?", state: "untracked", path: new.txt, orig: null}]',
  );
  // The same without -z: C-quoted unicode path, tab between a rename's paths.
  const lines = `1 .M N... 100644 100644 100644 ${H40} ${H40} a.txt\n` +
    `2 R. N... 100644 100644 100644 ${H40} ${H40} R100 "renamed \\303\\251.txt"\tsp ace.txt\n` +
    "? d/\n? new.txt\n";
  assertEquals(show(STATUS, lines), show(STATUS, z));
  // Captured mid-merge: added, a symlink (mode 120000), unmerged, a tab in a name, ignored,
  // and the --branch headers.
  const merge = "# branch.oid 5e96a7eb655d79f062a9bcee60aef38e73931330\0# branch.head main\0" +
    `1 A. N... 000000 100644 100644 ${Z40} ${H40} kcopy\0` +
    `1 A. N... 000000 120000 120000 ${Z40} ${H40} link\0` +
    `u UU N... 100644 100644 100644 100644 ${H40} ${H40} ${H40} f\0` +
    "? .gitignore\0? tab\tname\0! ig.log\0";
  const t = parse(STATUS, merge) as { rows: { fields: Map<string, Value> }[] };
  assertEquals(
    t.rows.map((r) => [r.fields.get("status"), r.fields.get("state")]),
    [["A.", "added"], ["A.", "added"], ["UU", "unmerged"], ["?", "untracked"], ["?", "untracked"], [
      "!",
      "ignored",
    ]],
  );
  assertEquals(renderInline(t.rows[4].fields.get("path")!), "tab\tname");
  // Staged and unstaged states, copies, type changes, deletions.
  const more = `1 MM N... 100644 100644 100644 ${H40} ${H40} both\0` +
    `1 .D N... 100644 100644 000000 ${H40} ${H40} gone\0` +
    `1 T. N... 100644 120000 120000 ${H40} ${H40} tc\0` +
    `2 C. N... 100644 100644 100644 ${H40} ${H40} C75 copy\0orig\0`;
  assertEquals(
    show(STATUS, more),
    '[{status: "MM", state: "modified", path: both, orig: null}, ' +
      '{status: ".D", state: "deleted", path: gone, orig: null}, ' +
      '{status: "T.", state: "typechange", path: tc, orig: null}, ' +
      '{status: "C.", state: "copied", path: copy, orig: orig}]',
  );
  // A clean tree: an empty table (a table, not a list).
  assert(parse(STATUS, "") instanceof TableV);
  assertEquals(show(STATUS, ""), "[]");
  assertEquals(show(STATUS, "# branch.head main\0"), "[]");
});

Deno.test("porcelain-v2: anything else fails the whole parse", () => {
  fails(STATUS, " M a.txt\n?? new.txt\n", /not porcelain v2/); // --short output
  fails(STATUS, `1 .M N... 100644 ${H40} a.txt\0`, /short ordinary/); // cut entry
  fails(STATUS, `2 R. N... 100644 100644 100644 ${H40} ${H40} R100 new\0`, /source/); // no orig
  fails(STATUS, "1 ?? N... x\0", /not porcelain v2/);
  fails(STATUS, "? \0", /without a path/);
  fails(STATUS, '1 .M N... 100644 100644 100644 a b "bad\\3"\n', /octal/);
  fails(STATUS, new Uint8Array([0x3f, 0x20, 0xff, 0xfe, 0]), /UTF-8/);
});

const LOG = spec(
  "z-records",
  "table<{hash: str, short: str, author: str, email: str, date: datetime, parents: str, subject: str}>",
);

Deno.test("z-records: git log -z with a NUL-separated format", () => {
  // Captured: two commits (the newest first), a unicode author, a root commit without parents.
  const out = "26ff5c823c3d6a7bfa96b0128a4997fc20a15a18\x0026ff5c8\x00Zoë Test\x00a@b\x00" +
    "2026-12-01T21:32:52+00:00\x005e96a7eb655d79f062a9bcee60aef38e73931330\x00second body line\x00" +
    "5e96a7eb655d79f062a9bcee60aef38e73931330\x005e96a7e\x00Zoë Test\x00a@b\x00" +
    "2026-12-01T21:32:38+01:00\x00\x00first: ünïcode subject\x00";
  const t = parse(LOG, out) as { rows: { fields: Map<string, Value> }[] };
  assertEquals(t.rows.length, 2);
  assertEquals(t.rows[0].fields.get("author"), "Zoë Test");
  assertEquals(renderInline(t.rows[1].fields.get("date")!), "2026-12-01T20:32:38Z");
  assertEquals(t.rows[1].fields.get("parents"), "");
  // Without the trailing terminator (git's separator form) the same records.
  assertEquals(show(LOG, out.slice(0, -1)), show(LOG, out));
  assertEquals(show(LOG, ""), "[]");
  fails(LOG, out.split("\0").slice(0, 9).join("\0"), /do not make records of 7/);
  fails(LOG, out.replace("2026-12-01T21:32:52+00:00", "yesterday"), /date: expected datetime/);
  // A list hint: `git ls-files -z`.
  const files = spec("z-records", "list<path>");
  assertEquals(show(files, "a.txt\0d/x\0renamed é.txt\0"), '[a.txt, d/x, "renamed é.txt"]');
  assertEquals(show(files, ""), "[]");
});

const PS = spec(
  "cols",
  'table<{pid: int, ppid: int, user: str, "%cpu": float, "%mem": float, rss: size_kb, vsz: size_kb, tty: str, stat: str, elapsed: duration, command: str}>',
);

Deno.test("cols: ps -o with the command line absorbing the rest", () => {
  const out =
    "  PID  PPID USER                             %CPU %MEM   RSS    VSZ TT       STAT ELAPSED COMMAND\n" +
    "    1     0 root                              0.5  0.0 17576  51600 ?        S<Ll     763 /process_api --addr 0.0.0.0:2024  --max-ws 32768\n" +
    "    2     0 root                              0.0  0.0     0      0 ?        S        763 [kthreadd]\n" +
    " 4242     1 zoë                              12.5  1.2  2048 409600 pts/0    R+        65 vim ünï.txt\n";
  const t = parse(PS, out) as { rows: { fields: Map<string, Value> }[] };
  assertEquals(t.rows.length, 3);
  const r = t.rows[0].fields;
  assertEquals(r.get("pid"), 1);
  assertEquals(renderInline(r.get("%cpu")!), "0.5");
  assertEquals(renderInline(r.get("rss")!), "18mb");
  assertEquals(r.get("command"), "/process_api --addr 0.0.0.0:2024  --max-ws 32768");
  assertEquals(renderInline(t.rows[2].fields.get("elapsed")!), "1m5s");
  assertEquals(t.rows[2].fields.get("user"), "zoë");
  assertEquals(show(PS, "  PID  PPID USER\n"), "[]"); // header only
  assertEquals(show(PS, ""), "[]");
  fails(PS, out.replace("17576", "17M"), /rss: expected size_kb/);
  fails(PS, out + "    9     2 root\n", /line 5: 3 columns, expected 11/);
  fails(PS, out.replace(" 0.5 ", " n/a "), /%cpu: expected float/);
});

Deno.test("cols: df -kP, ss, who; cols2: vmstat with an optional newer column", () => {
  const df = spec(
    "cols",
    "table<{filesystem: str, size: size_kb?, used: size_kb?, avail: size_kb?, use_pct: pct?, mounted: path}>",
  );
  const dfOut = "Filesystem     1024-blocks     Used Available Capacity Mounted on\n" +
    "/dev/vda         264212084 22912944  83477968      22% /\n" +
    "tmpfs             24683584        0  24683584       0% /dev/shm\n" +
    "//nas/share      100 50 50 50% /mnt/my share\n" +
    "proc                     -        -         -        - /proc\n";
  assertEquals(
    show(df, dfOut),
    '[{filesystem: "/dev/vda", size: 270.55gb, used: 23.46gb, avail: 85.48gb, use_pct: 22, mounted: /}, ' +
      '{filesystem: "tmpfs", size: 25.28gb, used: 0b, avail: 25.28gb, use_pct: 0, mounted: /dev/shm}, ' +
      '{filesystem: "//nas/share", size: 102.4kb, used: 51.2kb, avail: 51.2kb, use_pct: 50, mounted: "/mnt/my share"}, ' +
      '{filesystem: "proc", size: null, used: null, avail: null, use_pct: null, mounted: /proc}]',
  );
  fails(df, dfOut.replace("22%", "lots"), /use_pct: expected pct/);
  const ss = spec(
    "cols",
    "table<{netid: str, state: str, recv_q: int, send_q: int, local: str, peer: str, process: str?}>",
  );
  const ssOut = "Netid State  Recv-Q Send-Q Local Address:Port Peer Address:PortProcess\n" +
    "tcp   LISTEN 0      128          0.0.0.0:2024      0.0.0.0:*          \n" +
    'tcp   ESTAB  0      36     [::ffff:10.0.0.2]:22  [::ffff:10.0.0.9]:50514 users:(("sshd",pid=812,fd=4))\n';
  assertEquals(
    show(ss, ssOut),
    '[{netid: "tcp", state: "LISTEN", recv_q: 0, send_q: 128, local: "0.0.0.0:2024", peer: "0.0.0.0:*", process: null}, ' +
      '{netid: "tcp", state: "ESTAB", recv_q: 0, send_q: 36, local: "[::ffff:10.0.0.2]:22", peer: "[::ffff:10.0.0.9]:50514", process: "users:((\\"sshd\\",pid=812,fd=4))"}]',
  );
  const who = spec("cols", "table<{user: str, line: str, date: str, time: str, comment: str?}>");
  assertEquals(show(who, "NAME     LINE         TIME             COMMENT\n"), "[]");
  assertEquals(
    show(
      who,
      "NAME LINE TIME COMMENT\nzoë      pts/0        2026-01-05 09:14 (10.0.0.9)\nroot tty1 2026-01-05 08:00\n",
    ),
    '[{user: "zoë", line: "pts/0", date: "2026-01-05", time: "09:14", comment: "(10.0.0.9)"}, ' +
      '{user: "root", line: "tty1", date: "2026-01-05", time: "08:00", comment: null}]',
  );
  const vm = spec(
    "cols2",
    "table<{r: int, b: int, swpd: size_kb, free: size_kb, buff: size_kb, cache: size_kb, si: int, so: int, bi: int, bo: int, in: int, cs: int, us: int, sy: int, id: int, wa: int, st: int, gu: int?}>",
  );
  const head =
    "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n" +
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st gu\n";
  const v4 = show(
    vm,
    head +
      " 3  0      0 24023148  49976 414452    0    0   668   582  284  541 10  4 85  0  0  0\n",
  );
  assert(v4.includes("gu: 0") && v4.includes("free: 24.6gb"), v4);
  const v3 = show(vm, head + " 1  0      0 1000  10 20    0    0   1   2  3  4 5  6 89  0  0\n");
  assert(v3.includes("gu: null"), v3);
  fails(vm, head + " 1  0 0\n", /columns/);
  assertEquals(show(vm, head), "[]");
});

Deno.test("tsv-headerless: du -k and stat --printf; tsv: a header row", () => {
  const du = spec("tsv-headerless", "table<{size: size_kb, path: path}>");
  assertEquals(
    show(du, "64\t/tmp/gt/.git/hooks\n8\t/tmp/gt/ünï code\n4\t.\n"),
    '[{size: 65.54kb, path: /tmp/gt/.git/hooks}, {size: 8.19kb, path: "/tmp/gt/ünï code"}, {size: 4.1kb, path: .}]',
  );
  assertEquals(show(du, ""), "[]");
  fails(du, "64\t/a\tb\n", /3 cells, expected 2/);
  fails(du, "64K\t/a\n", /size: expected size_kb/);
  fails(du, "du: cannot read directory '/root': Permission denied\n", /size: expected size_kb/);
  const stat = spec(
    "tsv-headerless",
    "table<{path: path, size: size_b, type: str, mode: str, user: str, group: str, modified: epoch}>",
  );
  assertEquals(
    show(
      stat,
      "a.txt\t4\tregular file\t644\troot\troot\t1796160758\nd\t4096\tdirectory\t755\troot\troot\t0\n",
    ),
    '[{path: a.txt, size: 4b, type: "regular file", mode: "644", user: "root", group: "root", modified: 2026-12-01T21:32:38Z}, ' +
      '{path: d, size: 4.1kb, type: "directory", mode: "755", user: "root", group: "root", modified: 1970-01-01T00:00:00Z}]',
  );
  fails(stat, "a\t4\tfile\t644\troot\troot\tsoon\n", /modified: expected epoch/);
  const tsv = spec("tsv", "table<{count: int}>");
  assertEquals(
    show(tsv, "name\tcount\nzoë\t3\nbob\t10\n"),
    '[{name: "zoë", count: 3}, {name: "bob", count: 10}]',
  );
  assertEquals(show(tsv, "name\tcount\n"), "[]");
  assertEquals(show(tsv, ""), "[]");
  fails(tsv, "name\tcount\nbob\n", /line 2: 1 cells, the header has 2/);
  fails(tsv, "name\tcount\nbob\tmany\n", /count: expected int/);
  fails(tsv, "name\tother\nbob\t1\n", /no column `count`/);
  fails(tsv, "count\tcount\n1\t2\n", /duplicate header/);
});

Deno.test("csv: RFC 4180 quoting, typed cells by header name", () => {
  const csv = spec("csv", "table<{size: size_b, when: datetime?}>");
  const out = 'name,size,when\r\n"Smith, Zoë",12,2026-01-05T09:00:00Z\r\n' +
    '"say ""hi""",0,\r\n"two\nlines",7,2026-01-05\r\n';
  assertEquals(
    show(csv, out),
    '[{name: "Smith, Zoë", size: 12b, when: 2026-01-05T09:00:00Z}, ' +
      '{name: "say \\"hi\\"", size: 0b, when: null}, {name: "two\\nlines", size: 7b, when: 2026-01-05T00:00:00Z}]',
  );
  assertEquals(show(csv, ""), "[]");
  assertEquals(show(csv, "name,size,when\n"), "[]");
  fails(csv, "name,size,when\na,1\n", /2 cells, the header has 3/);
  fails(csv, "name,size,when\na,-1,\n", /size: expected size_b/);
});

Deno.test("json: documents, unwrap, hint typing and shape checks", () => {
  // lsblk -J -b (util-linux 2.38): sizes in bytes become sizes.
  const lsblk = spec("json", "table<{name: str, size: size_b?}>", "blockdevices");
  const out =
    '{"blockdevices": [{"name": "zram0", "maj:min": "253:0", "size": 0, "mountpoints": [null]},' +
    '{"name": "vda", "size": 274877906944, "mountpoints": ["/"]}, {"name": "sr0", "size": "1073741824"}]}';
  assertEquals(
    show(lsblk, out),
    '[{name: "zram0", "maj:min": "253:0", size: 0b, mountpoints: [null]}, {name: "vda", size: 274.88gb, mountpoints: ["/"]}, {name: "sr0", size: 1.07gb}]',
  );
  fails(lsblk, '{"disks": []}', /no top-level `blockdevices`/);
  fails(lsblk, '{"blockdevices": [{"name": "x", "size": -1}]}', /row 1: expected size_b/);
  fails(lsblk, '{"blockdevices": {"name": "x"}}', /array of objects/);
  fails(lsblk, '{"blockdevices": [{"size": 1}]}', /missing field `name`/);
  // sqlite3 -json: rows, or nothing at all for no rows.
  const sql = spec("json", "table");
  assertEquals(
    show(sql, '[{"a":1,"b":"ü","c":null,"d":1.5},\n{"a":2,"b":"x","c":3,"d":4}]\n'),
    '[{a: 1, b: "ü", c: null, d: 1.5}, {a: 2, b: "x", c: 3, d: 4}]',
  );
  assertEquals(show(sql, ""), "[]");
  assertEquals(show(sql, "[]"), "[]");
  fails(sql, '[{"1":1}]\n[{"2":2}]\n', /not one JSON document/); // two statements
  fails(sql, '{"a": 1}', /array of objects/);
  fails(sql, '[{"a": 1}', /not one JSON document/);
  // gh --json fields with a datetime.
  const gh = spec("json", "table<{number: int, title: str, createdAt: datetime}>");
  assertEquals(
    show(
      gh,
      '[{"number": 7, "title": "Fix ünïcode", "createdAt": "2026-01-05T09:00:00Z", "author": {"login": "z"}}]',
    ),
    '[{number: 7, title: "Fix ünïcode", createdAt: 2026-01-05T09:00:00Z, author: {login: "z"}}]',
  );
  // Text in a JSON string is typed like a text cell ("7" is an int); anything else must fit.
  fails(
    gh,
    '[{"number": "seven", "title": "x", "createdAt": "2026-01-05T09:00:00Z"}]',
    /expected int/,
  );
  fails(
    gh,
    '[{"number": true, "title": "x", "createdAt": "2026-01-05T09:00:00Z"}]',
    /expected int/,
  );
  fails(gh, '[{"number": 7, "title": "x", "createdAt": "last week"}]', /expected datetime/);
  // No hint: any document.
  const any = spec("json");
  assertEquals(show(any, '{"a": [1, 2]}'), "{a: [1, 2]}");
  assertEquals(show(any, "42\n"), "42");
  fails(any, "", /no output/);
  fails(any, "not json", /not one JSON document/);
  // A record hint.
  const rec = spec("json", "record<{Account: str}>");
  assertEquals(
    show(rec, '{"UserId": "AID", "Account": "123", "Arn": "arn:aws:iam::123:user/z"}'),
    '{UserId: "AID", Account: "123", Arn: "arn:aws:iam::123:user/z"}',
  );
  fails(rec, "[]", /expected a JSON object/);
});

Deno.test("ndjson: docker ps --format '{{json .}}', rg --json", () => {
  const docker = spec("ndjson", "table<{ID: str, Image: str, Names: str, Status: str}>");
  const out =
    '{"Command":"\\"nginx -g \'daemon…\\"","CreatedAt":"2026-01-05 09:00:00 +0000 UTC","ID":"3f2a1b","Image":"nginx:1.25","Labels":"","LocalVolumes":"0","Mounts":"","Names":"web","Networks":"bridge","Ports":"0.0.0.0:8080->80/tcp","RunningFor":"2 hours ago","Size":"0B","State":"running","Status":"Up 2 hours"}\n' +
    '{"Command":"\\"sleep 1d\\"","CreatedAt":"2026-01-05 08:00:00 +0000 UTC","ID":"9c8d7e","Image":"alpine","Labels":"","LocalVolumes":"0","Mounts":"","Names":"zoë-job","Networks":"none","Ports":"","RunningFor":"3 hours ago","Size":"0B","State":"exited","Status":"Exited (0) 1 hour ago"}\n';
  const t = parse(docker, out) as { rows: { fields: Map<string, Value> }[] };
  assertEquals(t.rows.map((r) => [r.fields.get("Names"), r.fields.get("State")]), [[
    "web",
    "running",
  ], ["zoë-job", "exited"]]);
  assertEquals(show(docker, ""), "[]"); // no containers
  fails(docker, out + "not json\n", /line 3: not a JSON document/);
  fails(docker, '{"ID": "x"}\n', /missing field `Image`/);
  const rg = spec("ndjson", "table<{type: str, data: any}>");
  const rgOut = '{"type":"begin","data":{"path":{"text":"a.txt"}}}\n' +
    '{"type":"match","data":{"path":{"text":"a.txt"},"lines":{"text":"héllo\\n"},"line_number":1,"absolute_offset":0,"submatches":[{"match":{"text":"héllo"},"start":0,"end":6}]}}\n' +
    '{"type":"end","data":{"path":{"text":"a.txt"},"binary_offset":null,"stats":{}}}\n' +
    '{"data":{"elapsed_total":{"human":"0.001s","nanos":1,"secs":0},"stats":{}},"type":"summary"}\n';
  const r = parse(rg, rgOut) as { rows: { fields: Map<string, Value> }[] };
  assertEquals(r.rows.map((x) => x.fields.get("type")), ["begin", "match", "end", "summary"]);
  // Scalars per line: a list.
  assertEquals(show(spec("ndjson"), "1\n\n2\n"), "[1, 2]");
});

Deno.test("lines and kv: git branch names, env -0, key: value", () => {
  assertEquals(show(spec("lines", "list<str>"), "main\n* zoë/ünï\n"), '["main", "* zoë/ünï"]');
  assertEquals(show(spec("lines", "list<str>"), ""), "[]");
  assertEquals(show(spec("lines", "list<str>"), "no newline"), '["no newline"]');
  assertEquals(show(spec("lines", "list<path>"), "a.txt\r\nd/x\r\n"), "[a.txt, d/x]");
  const kv = spec("kv", "record");
  assertEquals(
    show(kv, "HOME=/root\0PATH=/usr/bin:/bin\0MULTI=a\nb\0EMPTY=\0EQ=a=b\0"),
    '{HOME: "/root", PATH: "/usr/bin:/bin", MULTI: "a\\nb", EMPTY: "", EQ: "a=b"}',
  );
  assertEquals(
    show(kv, "Architecture:   x86_64\nModel name:     AMD EPYC\n\n"),
    '{Architecture: "x86_64", "Model name": "AMD EPYC"}',
  );
  assertEquals(show(spec("kv", "record<{CPUs: int}>"), "CPUs: 2\n"), "{CPUs: 2}");
  assertEquals(show(kv, ""), "{}");
  fails(kv, "HOME=/root\nline without separator\n", /entry 2: neither/);
  fails(spec("kv", "record<{CPUs: int}>"), "CPUs: two\n", /CPUs: expected int/);
});

Deno.test("none and unknown parsers parse nothing; hints are checked strictly", () => {
  assertEquals(parse(spec("none"), "anything"), undefined);
  throws(() => parseHint("table<{a: nope}>"), /unknown type `nope`/);
  throws(() => parseHint("table<{a: int, a: str}>"), /duplicate field/);
  throws(() => parseHint("table<{a: int}"), /expected `>`/);
  throws(() => parseHint('table<{"unterminated: int}>'), /unterminated/);
  assertEquals(parseHint("list<{a: int}>").k, "table");
});
