/**
 * `match` (language §12): patterns compile to matcher functions that bind into the arm scope.
 *
 * @module
 */

import type { MatchExpr, Pattern } from "../syntax/ast.ts";
import { ListV, mkInt, RecordV, typeName, type Value } from "../value/types.ts";
import { then } from "./maybe.ts";
import { Scope } from "./scope.ts";
import type { Ctl } from "./ctl.ts";
import type { Evaluator } from "./evaluator.ts";
import { at, compileCtl, compileExpr, cond, type CS, eq } from "./expressions.ts";
import { compareValues } from "../value/compare.ts";
import { compileBody } from "./statements.ts";

type Matcher = (v: Value, sc: Scope) => boolean;

function compilePattern(p: Pattern): Matcher {
  switch (p.kind) {
    case "PWild":
      return () => true;
    case "PBind": {
      const name = p.name;
      return (v, sc) => {
        sc.declare(name, v);
        return true;
      };
    }
    case "PLit": {
      const lit = p.value;
      const want: Value = lit.kind === "Int" ? mkInt(BigInt(lit.value)) : lit.value;
      return (v) => eq(v, want);
    }
    case "PRange": {
      const lo = mkInt(BigInt(p.start));
      const hi = mkInt(BigInt(p.end));
      const inc = p.inclusive;
      const span = p.span;
      return (v) =>
        at(span, () => {
          if (compareValues(v, lo) < 0) return false;
          const c = compareValues(v, hi);
          return inc ? c <= 0 : c < 0;
        });
    }
    case "PType": {
      const t = p.type;
      const binder = p.binder;
      return (v, sc) => {
        if (typeName(v) !== t) return false;
        if (binder !== "_") sc.declare(binder, v);
        return true;
      };
    }
    case "PRecord": {
      const fields = p.fields.map((f) => ({
        key: f.key,
        m: f.pattern === undefined ? null : compilePattern(f.pattern),
      }));
      return (v, sc) => {
        if (!(v instanceof RecordV)) return false;
        for (const f of fields) {
          if (!v.fields.has(f.key)) return false;
          const x = v.fields.get(f.key) ?? null;
          if (f.m === null) sc.declare(f.key, x);
          else if (!f.m(x, sc)) return false;
        }
        return true;
      };
    }
    case "PList": {
      const items = p.items.map(compilePattern);
      const rest = p.rest;
      return (v, sc) => {
        if (!(v instanceof ListV)) return false;
        const n = v.items.length;
        if (rest === undefined ? n !== items.length : n < items.length) return false;
        for (let i = 0; i < items.length; i++) if (!items[i](v.items[i], sc)) return false;
        if (rest !== undefined && rest !== "_") {
          sc.declare(rest, new ListV(v.items.slice(items.length)));
        }
        return true;
      };
    }
  }
}

/** Compile a `match` expression: first arm whose pattern and guard hold; no arm → null. */
export function compileMatch(ev: Evaluator, e: MatchExpr): CS {
  const S = compileExpr(ev, e.subject);
  const arms = e.arms.map((a) => ({
    pats: a.patterns.map(compilePattern),
    guard: a.guard === undefined ? null : compileExpr(ev, a.guard),
    gspan: a.guard?.span ?? a.span,
    body: a.body.kind === "Block"
      ? compileBody(ev, a.body.body, "value")
      : compileCtl(ev, a.body, false),
  }));
  const tryArm = (v: Value, sc: Scope, i: number): ReturnType<CS> => {
    for (; i < arms.length; i++) {
      const arm = arms[i];
      for (const pat of arm.pats) {
        const as = new Scope(sc);
        if (!pat(v, as)) continue;
        if (arm.guard === null) return arm.body(as);
        const g = arm.guard(as);
        if (g instanceof Promise) {
          const next = i + 1;
          return g.then((gv): Value | Ctl | Promise<Value | Ctl> =>
            cond(gv, arm.gspan) ? arm.body(as) : tryArm(v, sc, next)
          );
        }
        if (cond(g, arm.gspan)) return arm.body(as);
        break;
      }
    }
    return null;
  };
  return (sc) => then(S(sc), (v) => tryArm(v, sc, 0));
}
