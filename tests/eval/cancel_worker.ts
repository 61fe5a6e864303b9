/** Worker for the cancellation test: evaluates a program with a shared cancel flag. */

import { Evaluator } from "../../lib/eval/mod.ts";
import { ShoalError } from "../../lib/value/errors.ts";

self.onmessage = async (e: MessageEvent<{ flag: Int32Array; src: string }>) => {
  const ev = new Evaluator({ cancel: e.data.flag, cwd: Deno.cwd() });
  const program = ev.parse(e.data.src);
  self.postMessage("started");
  try {
    await ev.evalProgram(program);
    self.postMessage("finished");
  } catch (err) {
    self.postMessage(err instanceof ShoalError ? err.err.code : String(err));
  }
};
