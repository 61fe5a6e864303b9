/**
 * The Shoal AST (wire `ast_version: 2`).
 *
 * Plain JSON-serialisable data: every node is an object with a `kind` tag and a byte `span`
 * `[start, end)` into the UTF-8 source. No classes, no bigints, no functions, no cycles —
 * the kernel sends it over the wire (`parse`, journal `ast` column) as it is.
 * Numbers that may exceed 2^53 (ints, sizes, durations) are decimal strings.
 */

/** Byte offsets `[start, end)` into the UTF-8 source. */
export type Span = [number, number];

/** The AST version carried on the wire. */
export const AST_VERSION = 2;

/** A whole source unit. */
export interface Program {
  kind: "Program";
  ast_version: 2;
  body: Stmt[];
  span: Span;
}

// ---------------------------------------------------------------------------------------------
// Types, parameters

/** A type annotation: `int`, `list<str>`, `path?`. Only used for word binding (language §6.2). */
export interface TypeRef {
  name: string;
  args: TypeRef[];
  optional: boolean;
  span: Span;
}

/** A declared parameter of a `fn` or lambda. Lambdas never have defaults. */
export interface Param {
  name: string;
  type?: TypeRef;
  default?: Expr;
  span: Span;
}

/** The variadic `...rest: list<T>` parameter. */
export interface RestParam {
  name: string;
  type?: TypeRef;
  span: Span;
}

// ---------------------------------------------------------------------------------------------
// Statements

/** `let x = e` / `var x = e` (`name` may be `_`). */
export interface LetStmt {
  kind: "Let";
  mutable: boolean;
  name: string;
  type?: TypeRef;
  value: Expr;
  exported: boolean;
  span: Span;
}

/** `fn name(params) -> T { body }`. */
export interface FnDecl {
  kind: "FnDecl";
  name: string;
  params: Param[];
  rest?: RestParam;
  ret?: TypeRef;
  body: BlockExpr;
  exported: boolean;
  span: Span;
}

/** `alias name = command`. */
export interface AliasStmt {
  kind: "Alias";
  name: string;
  command: CmdExpr;
  span: Span;
}

/** `use ./lib/mod`. */
export interface UseStmt {
  kind: "Use";
  target: string;
  span: Span;
}

/** `return [expr]`. */
export interface ReturnStmt {
  kind: "Return";
  value?: Expr;
  span: Span;
}

/** `break`. */
export interface BreakStmt {
  kind: "Break";
  span: Span;
}

/** `continue`. */
export interface ContinueStmt {
  kind: "Continue";
  span: Span;
}

/** `for x in iterable { body }` (`binder` may be `_`). */
export interface ForStmt {
  kind: "For";
  binder: string;
  iter: Expr;
  body: BlockExpr;
  span: Span;
}

/** `while cond { body }`. */
export interface WhileStmt {
  kind: "While";
  cond: Expr;
  body: BlockExpr;
  span: Span;
}

/** Assignment operators (compound ones desugar to `x = x op e` at evaluation). */
export type AssignOp = "=" | "+=" | "-=" | "*=" | "/=";

/** `x = e`, `x += e` … */
export interface AssignStmt {
  kind: "Assign";
  target: string;
  op: AssignOp;
  value: Expr;
  span: Span;
}

/** `env.NAME = e`. */
export interface EnvAssignStmt {
  kind: "EnvAssign";
  name: string;
  op: AssignOp;
  value: Expr;
  span: Span;
}

/**
 * An expression statement. Command statements are expression statements whose `expr` is a
 * `Cmd`, a `LangBlock`, or a `Logical` chain with command operands.
 */
export interface ExprStmt {
  kind: "ExprStmt";
  expr: Expr;
  span: Span;
}

/** Any statement. */
export type Stmt =
  | LetStmt
  | FnDecl
  | AliasStmt
  | UseStmt
  | ReturnStmt
  | BreakStmt
  | ContinueStmt
  | ForStmt
  | WhileStmt
  | AssignStmt
  | EnvAssignStmt
  | ExprStmt;

// ---------------------------------------------------------------------------------------------
// Literals

/** Integer literal; `value` is the decimal text of an i64 (`"255"` for `0xff`). */
export interface IntLit {
  kind: "Int";
  value: string;
  span: Span;
}

/** Float literal (always finite). */
export interface FloatLit {
  kind: "Float";
  value: number;
  span: Span;
}

/** Size literal; `bytes` is the decimal text of a u64. */
export interface SizeLit {
  kind: "Size";
  bytes: string;
  span: Span;
}

/** Duration literal; `ns` is the decimal text of an i64. */
export interface DurationLit {
  kind: "Duration";
  ns: string;
  span: Span;
}

/** Time-of-day literal `10:30am`, `23:15:45`. */
export interface TimeLit {
  kind: "Time";
  h: number;
  m: number;
  s: number;
  span: Span;
}

/** A string without interpolation holes (already unescaped / dedented). */
export interface StrLit {
  kind: "Str";
  value: string;
  span: Span;
}

/** A literal text run inside an interpolated string. */
export interface StrText {
  kind: "Text";
  value: string;
  span: Span;
}

/** `"a {x} b"`: literal runs and expression holes in order. */
export interface StrInterp {
  kind: "StrInterp";
  parts: (StrText | Expr)[];
  span: Span;
}

/** `re"…"` (source kept verbatim; compiled at evaluation). */
export interface RegexLit {
  kind: "Regex";
  source: string;
  span: Span;
}

/** `t"…"` (source kept verbatim; parsed at evaluation). */
export interface DateTimeLit {
  kind: "DateTime";
  source: string;
  span: Span;
}

/** `true` / `false`. */
export interface BoolLit {
  kind: "Bool";
  value: boolean;
  span: Span;
}

/** `null`. */
export interface NullLit {
  kind: "Null";
  span: Span;
}

// ---------------------------------------------------------------------------------------------
// Compound expressions

/** A bare identifier in expression position. */
export interface Ident {
  kind: "Ident";
  name: string;
  span: Span;
}

/** `[a, b, c]`. */
export interface ListExpr {
  kind: "List";
  items: Expr[];
  span: Span;
}

/** One `key: value` of a record literal (`key` is the unquoted text). */
export interface RecordField {
  key: string;
  value: Expr;
  span: Span;
}

/** `{a: 1, "k-2": 2}`; `{}` is the empty record. */
export interface RecordExpr {
  kind: "Record";
  fields: RecordField[];
  span: Span;
}

/** `{ stmt; stmt }` — a block expression with its own scope. */
export interface BlockExpr {
  kind: "Block";
  body: Stmt[];
  span: Span;
}

/**
 * `x => e`, `(a, b: int) => e`, `() => { … }`, the implicit item lambda of `.where(.size > 1mb)`
 * (`params: [{name: "__item"}]`, `implicit: true`) and a trailing block (`params: []`,
 * `trailing: true`).
 */
export interface LambdaExpr {
  kind: "Lambda";
  params: Param[];
  body: Expr;
  implicit: boolean;
  trailing: boolean;
  span: Span;
}

/** Prefix operators. */
export type UnaryOp = "!" | "-";

/** `!x`, `-x`. */
export interface UnaryExpr {
  kind: "Unary";
  op: UnaryOp;
  operand: Expr;
  span: Span;
}

/** Binary operators other than `&&`/`||` and ranges. */
export type BinaryOp =
  | "+"
  | "-"
  | "*"
  | "/"
  | "%"
  | "=="
  | "!="
  | "<"
  | "<="
  | ">"
  | ">="
  | "in"
  | "??";

/** `a op b`. */
export interface BinaryExpr {
  kind: "Binary";
  op: BinaryOp;
  left: Expr;
  right: Expr;
  span: Span;
}

/** `a && b`, `a || b` (operands may be commands). */
export interface LogicalExpr {
  kind: "Logical";
  op: "&&" | "||";
  left: Expr;
  right: Expr;
  span: Span;
}

/** `a..b`, `a..=b`. */
export interface RangeExpr {
  kind: "Range";
  start: Expr;
  end: Expr;
  inclusive: boolean;
  span: Span;
}

/** `target.name` / `target?.name`. */
export interface FieldExpr {
  kind: "Field";
  target: Expr;
  name: string;
  optional: boolean;
  span: Span;
}

/** A call argument: positional (`name` absent) or named (`name: value`). */
export interface Arg {
  name?: string;
  value: Expr;
  span: Span;
}

/**
 * `target.name(args)` / `target?.name(args)`. A trailing block is appended to `args` as a
 * `Lambda` with `trailing: true`. `.feed(sort -r)` carries a `Cmd` as its single argument.
 */
export interface MethodCallExpr {
  kind: "MethodCall";
  target: Expr;
  name: string;
  args: Arg[];
  optional: boolean;
  span: Span;
}

/** `target[index]`. */
export interface IndexExpr {
  kind: "Index";
  target: Expr;
  index: Expr;
  span: Span;
}

/**
 * `name(args)`. Calls of anything that is not a plain name are lowered by the parser to
 * `{ let __iife = <callee>; __iife(args) }`.
 */
export interface CallExpr {
  kind: "Call";
  callee: string;
  args: Arg[];
  span: Span;
}

/** `if cond { … } else if … else { … }`. */
export interface IfExpr {
  kind: "If";
  cond: Expr;
  then: BlockExpr;
  else?: BlockExpr | IfExpr;
  span: Span;
}

/** One arm: alternatives `p1 | p2`, optional guard, body (block or expression). */
export interface MatchArm {
  patterns: Pattern[];
  guard?: Expr;
  body: Expr;
  span: Span;
}

/** `match subject { arms }`. */
export interface MatchExpr {
  kind: "Match";
  subject: Expr;
  arms: MatchArm[];
  span: Span;
}

/** `try { body } catch [binder] { handler }`. */
export interface TryExpr {
  kind: "Try";
  body: BlockExpr;
  binder?: string;
  handler: BlockExpr;
  span: Span;
}

/** Postfix `expr catch [binder] handler` (handler: block or expression). */
export interface CatchExpr {
  kind: "Catch";
  expr: Expr;
  binder?: string;
  handler: Expr;
  span: Span;
}

/** One `with` setting. */
export interface WithSetting {
  key: "cwd" | "env" | "reef";
  value: Expr;
  span: Span;
}

/** `with cwd: p, env: {…} { body }`. */
export interface WithExpr {
  kind: "With";
  settings: WithSetting[];
  body: BlockExpr;
  span: Span;
}

/** `spawn { body }`. */
export interface SpawnExpr {
  kind: "Spawn";
  body: BlockExpr;
  span: Span;
}

/** `sh { src }`, `python3 '''…'''` — `src` is the trimmed raw payload. */
export interface LangBlockExpr {
  kind: "LangBlock";
  lang: string;
  src: string;
  span: Span;
}

// ---------------------------------------------------------------------------------------------
// Commands

/** A plain word (`4kb`, `main`, `-5`, `NAME=v` as an argument); typed later by binding. */
export interface WordArg {
  kind: "Word";
  text: string;
  span: Span;
}

/** A word that starts with `/`, `./`, `../`, `~/` or is `~`. */
export interface PathWordArg {
  kind: "PathWord";
  text: string;
  span: Span;
}

/** A word containing `* ? [ ]`. */
export interface GlobWordArg {
  kind: "GlobWord";
  text: string;
  span: Span;
}

/** A quoted string argument (`Str` or `StrInterp`). */
export interface StrArg {
  kind: "StrArg";
  value: StrLit | StrInterp;
  span: Span;
}

/** `(expr-or-command)` as an argument. */
export interface SubArg {
  kind: "Sub";
  expr: Expr;
  span: Span;
}

/**
 * `--name`, `--name=v` (value: a `Word`), `--name= part` (value: that part).
 * `name` has `-` rewritten to `_` (`--dry-run` → `dry_run`); `raw` keeps the original spelling.
 */
export interface FlagLongArg {
  kind: "FlagLong";
  name: string;
  raw: string;
  value?: CmdArg;
  span: Span;
}

/** `-abc` (chars `abc`). */
export interface FlagShortArg {
  kind: "FlagShort";
  chars: string;
  span: Span;
}

/** `--`. */
export interface DashDashArg {
  kind: "DashDash";
  span: Span;
}

/** A lone `-`. */
export interface DashArg {
  kind: "Dash";
  span: Span;
}

/** Any command argument. */
export type CmdArg =
  | WordArg
  | PathWordArg
  | GlobWordArg
  | StrArg
  | SubArg
  | FlagLongArg
  | FlagShortArg
  | DashDashArg
  | DashArg;

/** `> f`, `>> f`, `< f`. */
export interface Redirect {
  op: ">" | ">>" | "<";
  target: CmdArg;
  span: Span;
}

/** `NAME=value` before the head. */
export interface EnvPrefix {
  name: string;
  value: string;
  span: Span;
}

/** `[NAME=v …] [^]head args… [redirects] [&]`. */
export interface CmdExpr {
  kind: "Cmd";
  env: EnvPrefix[];
  forced: boolean;
  head: string;
  headKind: "word" | "path";
  headSpan: Span;
  args: CmdArg[];
  redirects: Redirect[];
  background: boolean;
  span: Span;
}

/** Any expression. */
export type Expr =
  | IntLit
  | FloatLit
  | SizeLit
  | DurationLit
  | TimeLit
  | StrLit
  | StrInterp
  | RegexLit
  | DateTimeLit
  | BoolLit
  | NullLit
  | Ident
  | ListExpr
  | RecordExpr
  | BlockExpr
  | LambdaExpr
  | UnaryExpr
  | BinaryExpr
  | LogicalExpr
  | RangeExpr
  | FieldExpr
  | MethodCallExpr
  | IndexExpr
  | CallExpr
  | IfExpr
  | MatchExpr
  | TryExpr
  | CatchExpr
  | WithExpr
  | SpawnExpr
  | LangBlockExpr
  | CmdExpr;

// ---------------------------------------------------------------------------------------------
// Patterns

/** `_`. */
export interface WildPattern {
  kind: "PWild";
  span: Span;
}

/** `true`, `false`, an int or a plain string. */
export interface LitPattern {
  kind: "PLit";
  value: BoolLit | IntLit | StrLit;
  span: Span;
}

/** `1..5`, `1..=5` (int bounds as decimal text). */
export interface RangePattern {
  kind: "PRange";
  start: string;
  end: string;
  inclusive: boolean;
  span: Span;
}

/** `int n`, `str s`, `null n` — type test plus binder. */
export interface TypePattern {
  kind: "PType";
  type: string;
  binder: string;
  span: Span;
}

/** A plain binder (matches anything). */
export interface BindPattern {
  kind: "PBind";
  name: string;
  span: Span;
}

/** One field of an open record pattern: `{name}` or `{name: pattern}`. */
export interface RecordPatternField {
  key: string;
  pattern?: Pattern;
  span: Span;
}

/** `{a, b: p}` — open record pattern (extra fields ignored). */
export interface RecordPattern {
  kind: "PRecord";
  fields: RecordPatternField[];
  span: Span;
}

/** `[p, q, ...rest]`. */
export interface ListPattern {
  kind: "PList";
  items: Pattern[];
  rest?: string;
  span: Span;
}

/** Any pattern. */
export type Pattern =
  | WildPattern
  | LitPattern
  | RangePattern
  | TypePattern
  | BindPattern
  | RecordPattern
  | ListPattern;

/** Every node kind that can appear in a tree (for walkers). */
export type Node = Program | Stmt | Expr | Pattern | CmdArg;
