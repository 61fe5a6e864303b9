/** The value family: `shoal_get` reads a stored transcript value without running anything. */

import { z } from "zod";
import { Elide, forward, inlineProps, objectOut, READS, wireValue } from "./common.ts";
import type { ToolDef } from "./types.ts";

const GetIn = z.strictObject({
  ref: z.string().min(1).describe("transcript ref, e.g. out:17"),
  path: z.string().optional().describe("side-effect-free selector, e.g. .rows[0].name"),
  slice: z.array(z.int().min(0)).length(2).optional().describe("[start, end), half-open"),
  elide: Elide.optional(),
});

/** The value family. */
export const VALUE_TOOLS: ToolDef[] = [{
  name: "shoal_get",
  title: "Read a transcript value",
  description:
    "Read a stored transcript value without running anything again: select a field/index " +
    "with path (.rows[0].name), page with slice [start, end), and set an elision budget.",
  input: GetIn,
  outputSchema: objectOut({ ref: inlineProps.ref, value: wireValue }, ["ref", "value"]),
  annotations: { title: "Read a transcript value", ...READS },
  run: forward("value.get"),
}];
