/**
 * The flag tables of the builtins that shadow GNU coreutils (issue 13): what each implements
 * natively, which GNU flags hand the call to the system program, and which are refused
 * because they would ask a question nobody can answer (`-i`).
 *
 * @module
 */

import type { FlagTable } from "./flags.ts";

const NO_PROMPT = "nothing prompts here; check first (path(p).exists()) or use -n";

export const ECHO_FLAGS: FlagTable = {
  own: [
    { key: "n", short: "n", about: "accepted: echo adds no newline to its value anyway" },
    { key: "e", short: "eE", about: 'accepted: escapes belong in strings ("a\\tb")' },
  ],
  literalUnknown: true,
};

export const LS_FLAGS: FlagTable = {
  own: [
    { key: "all", short: "aA", long: ["all", "almost_all"], about: "include dotfiles" },
    {
      key: "long",
      short: "lh1gGos",
      long: ["human_readable", "si", "no_group", "size"],
      about: "accepted: every row already has size and modified (sizes read 1.2kb)",
    },
    { key: "color", long: ["color", "colour"], value: "WHEN", about: "accepted (no colour)" },
    { key: "time", short: "t", about: "newest first (by modified)" },
    { key: "size_sort", short: "S", about: "largest first" },
    { key: "reverse", short: "r", long: ["reverse"], about: "reverse the order" },
    { key: "directory", short: "d", long: ["directory"], about: "list a directory itself" },
  ],
  gnu: {
    short: "RiFpknQbBLHDZcuxXvUCm",
    long: [
      "recursive",
      "classify",
      "inode",
      "numeric_uid_gid",
      "sort",
      "time_style",
      "format",
      "group_directories_first",
      "full_time",
      "ignore",
      "hide",
      "indicator_style",
      "quoting_style",
      "dereference",
      "block_size",
      "literal",
      "escape",
      "width",
      "context",
      "author",
      "file_type",
    ],
  },
};

export const CAT_FLAGS: FlagTable = {
  own: [],
  gnu: {
    short: "AbeEnstTuv",
    long: [
      "show_all",
      "number_nonblank",
      "show_ends",
      "number",
      "squeeze_blank",
      "show_tabs",
      "show_nonprinting",
    ],
  },
};

export const HEAD_FLAGS: FlagTable = {
  own: [
    { key: "lines", short: "n", long: ["lines"], value: "N", about: "the first N lines (also -N)" },
    { key: "bytes", short: "c", long: ["bytes"], value: "N", about: "the first N bytes (bytes)" },
  ],
  numeric: "lines",
  gnu: { short: "qvz", long: ["quiet", "silent", "verbose", "zero_terminated"] },
};

export const STAT_FLAGS: FlagTable = {
  own: [],
  gnu: { short: "LfctZ", long: ["dereference", "file_system", "format", "printf", "terse"] },
};

export const MKDIR_FLAGS: FlagTable = {
  own: [
    { key: "parents", short: "p", long: ["parents"], about: "make parents; no error if it exists" },
    { key: "mode", short: "m", long: ["mode"], value: "MODE", about: "octal permissions (755)" },
    { key: "verbose", short: "v", long: ["verbose"], about: "accepted: the result lists them" },
  ],
  gnu: { short: "Z", long: ["context"] },
};

export const TOUCH_FLAGS: FlagTable = {
  own: [
    { key: "no_create", short: "c", long: ["no_create"], about: "do not create missing files" },
  ],
  gnu: { short: "adfhmrt", long: ["date", "reference", "time", "no_dereference"] },
};

export const CP_FLAGS: FlagTable = {
  own: [
    {
      key: "recursive",
      short: "rRa",
      long: ["recursive", "archive"],
      about: "copy directories",
    },
    { key: "no_clobber", short: "n", long: ["no_clobber"], about: "never replace a file" },
    {
      key: "force",
      short: "fv",
      long: ["force", "verbose"],
      about: "accepted: cp replaces files and lists the targets anyway",
    },
  ],
  gnu: {
    short: "plsLPHutTbSxd",
    long: [
      "preserve",
      "link",
      "symbolic_link",
      "dereference",
      "no_dereference",
      "update",
      "target_directory",
      "no_target_directory",
      "backup",
      "suffix",
      "one_file_system",
      "parents",
      "sparse",
      "reflink",
      "attributes_only",
      "remove_destination",
      "strip_trailing_slashes",
    ],
  },
  refused: { "-i": NO_PROMPT, "--interactive": NO_PROMPT },
};

export const MV_FLAGS: FlagTable = {
  own: [
    { key: "no_clobber", short: "n", long: ["no_clobber"], about: "never replace a file" },
    {
      key: "force",
      short: "fv",
      long: ["force", "verbose"],
      about: "accepted: mv replaces files and lists the targets anyway",
    },
  ],
  gnu: {
    short: "bStTuZ",
    long: [
      "backup",
      "suffix",
      "target_directory",
      "no_target_directory",
      "update",
      "context",
      "strip_trailing_slashes",
    ],
  },
  refused: { "-i": NO_PROMPT, "--interactive": NO_PROMPT },
};

export const RM_FLAGS: FlagTable = {
  own: [
    { key: "recursive", short: "rR", long: ["recursive"], about: "directories too (--permanent)" },
    { key: "force", short: "f", long: ["force"], about: "skip paths that do not exist" },
    { key: "permanent", long: ["permanent"], about: "delete for real instead of the trash" },
    {
      key: "verbose",
      short: "vd",
      long: ["verbose", "dir", "preserve_root", "one_file_system"],
      about: "accepted: rm lists what it did, and never removes /",
    },
  ],
  // rm never hands over to /bin/rm: that would skip the trash (and undo).
  refused: {
    "-i": NO_PROMPT,
    "-I": NO_PROMPT,
    "--interactive": NO_PROMPT,
    "--no-preserve-root": "rm never removes /",
  },
};

export const LN_FLAGS: FlagTable = {
  own: [
    { key: "symbolic", short: "s", long: ["symbolic"], about: "a symbolic link" },
    { key: "force", short: "f", long: ["force"], about: "replace an existing link name" },
    {
      key: "verbose",
      short: "vn",
      long: ["verbose", "no_dereference"],
      about: "accepted: the result says what it made",
    },
  ],
  gnu: {
    short: "rTtbSLPi",
    long: [
      "relative",
      "no_target_directory",
      "target_directory",
      "backup",
      "suffix",
      "logical",
      "physical",
      "interactive",
    ],
  },
};

export const ENV_FLAGS: FlagTable = {
  own: [],
  gnu: {
    short: "i0uCSv",
    long: ["ignore_environment", "null", "unset", "chdir", "split_string", "debug"],
  },
};

export const SLEEP_FLAGS: FlagTable = { own: [] };

/** `pwd` / `cd`: the session cwd is already the canonical (physical) path. */
export const CWD_FLAGS: FlagTable = {
  own: [{ key: "physical", short: "LP", long: ["logical", "physical"], about: "accepted" }],
};
