// Reads the repository's Dockerfile and .dockerignore the way a container engine does, as far as
// the deployment tests need: stages and their instructions (continuation lines joined, comments
// dropped), COPY sources and destinations, exec-form arguments, `&&`-chained shell commands, and
// whether the build context admits a path. It runs nothing: the tests decide what to check.

import { readFileSync } from 'node:fs';
import { posix } from 'node:path';

export interface Instruction {
  /** Upper-case keyword: FROM, RUN, COPY, ... */
  readonly keyword: string;
  /** Everything after the keyword, continuation lines joined with a space. */
  readonly args: string;
  /** 1-based line of the keyword. */
  readonly line: number;
}

export interface Stage {
  readonly image: string;
  /** The `AS name`, or null. */
  readonly name: string | null;
  readonly instructions: readonly Instruction[];
}

export interface CopyInstruction {
  /** The `--from` stage or image, or null for the build context. */
  readonly from: string | null;
  readonly sources: readonly string[];
  readonly destination: string;
}

/** Splits a Dockerfile into stages. Instructions before the first FROM (ARG) are ignored. */
export function parseDockerfile(text: string): Stage[] {
  const instructions: Instruction[] = [];
  const lines = text.split('\n');
  let pending: { keyword: string; parts: string[]; line: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    const trimmed = raw.trim();
    // Comment lines are removed before continuation lines are joined, also inside an instruction.
    if (trimmed.startsWith('#')) continue;
    if (pending === null && trimmed === '') continue;
    const continued = /\\\s*$/.test(raw);
    const content = continued ? trimmed.replace(/\\\s*$/, '').trim() : trimmed;
    if (pending === null) {
      const match = /^(\S+)\s*(.*)$/.exec(content);
      if (match === null) continue;
      pending = { keyword: (match[1] as string).toUpperCase(), parts: [match[2] as string], line: i + 1 };
    } else if (content !== '') {
      pending.parts.push(content);
    }
    if (!continued) {
      instructions.push({ keyword: pending.keyword, args: pending.parts.filter((p) => p !== '').join(' '), line: pending.line });
      pending = null;
    }
  }
  if (pending !== null) throw new Error(`Dockerfile:${pending.line}: the last instruction ends with a line continuation`);

  const stages: { image: string; name: string | null; instructions: Instruction[] }[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const match = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args);
      if (match === null) throw new Error(`Dockerfile:${instruction.line}: cannot read FROM ${instruction.args}`);
      stages.push({ image: match[1] as string, name: match[2] ?? null, instructions: [] });
    } else if (stages.length > 0) {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}

export function readDockerfile(path: string): Stage[] {
  return parseDockerfile(readFileSync(path, 'utf8'));
}

/** The arguments of an exec-form instruction (`["node", "x.js"]`); throws on the shell form. */
export function execForm(args: string): string[] {
  const value: unknown = JSON.parse(args);
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new Error(`not an exec-form array: ${args}`);
  return value as string[];
}

/** A COPY's flags, sources and destination, in either the shell or the JSON form. */
export function parseCopy(args: string): CopyInstruction {
  const words = args.trim().startsWith('[') ? execForm(args) : args.trim().split(/\s+/);
  let from: string | null = null;
  const rest: string[] = [];
  for (const word of words) {
    if (rest.length === 0 && word.startsWith('--')) {
      const fromFlag = /^--from=(.+)$/.exec(word);
      if (fromFlag !== null) from = fromFlag[1] as string;
      continue;
    }
    rest.push(word);
  }
  if (rest.length < 2) throw new Error(`COPY needs a source and a destination: ${args}`);
  return { from, sources: rest.slice(0, -1), destination: rest.at(-1) as string };
}

/** A COPY destination made absolute against the stage's WORKDIR at that point. */
export function absoluteDestination(destination: string, workdir: string): string {
  const absolute = destination.startsWith('/') ? destination : posix.join(workdir, destination);
  return posix.normalize(absolute).replace(/(.)\/$/, '$1');
}

/** Every COPY of a stage with its destination made absolute (WORKDIR followed in order). */
export function stageCopies(stage: Stage): (CopyInstruction & { readonly absoluteDestination: string })[] {
  let workdir = '/';
  const copies: (CopyInstruction & { readonly absoluteDestination: string })[] = [];
  for (const instruction of stage.instructions) {
    if (instruction.keyword === 'WORKDIR') workdir = absoluteDestination(instruction.args.trim(), workdir);
    if (instruction.keyword === 'COPY') {
      const copy = parseCopy(instruction.args);
      copies.push({ ...copy, absoluteDestination: absoluteDestination(copy.destination, workdir) });
    }
  }
  return copies;
}

export function stageWorkdir(stage: Stage): string {
  let workdir = '/';
  for (const instruction of stage.instructions) {
    if (instruction.keyword === 'WORKDIR') workdir = absoluteDestination(instruction.args.trim(), workdir);
  }
  return workdir;
}

/** The shell commands of a stage's RUN instructions, split at top-level `&&`, whitespace collapsed. */
export function runCommands(stage: Stage): string[] {
  return stage.instructions
    .filter((i) => i.keyword === 'RUN')
    .flatMap((i) => i.args.split(/\s&&\s/))
    .map((command) => command.replace(/\s+/g, ' ').trim())
    .filter((command) => command !== '');
}

/** The exec-form command of a HEALTHCHECK (`HEALTHCHECK [--opts] CMD [...]`). */
export function healthcheckCommand(stage: Stage): string[] | null {
  const instruction = stage.instructions.find((i) => i.keyword === 'HEALTHCHECK');
  if (instruction === undefined) return null;
  const match = /\bCMD\s+(\[.*\])\s*$/s.exec(instruction.args);
  if (match === null) throw new Error(`Dockerfile:${instruction.line}: HEALTHCHECK must use the exec form`);
  return execForm(match[1] as string);
}

// One .dockerignore pattern as a regular expression over a slash-separated path: `*` and `?`
// stay within a path segment, `**` spans segments, and a pattern also covers everything under a
// directory it names (as the engine excludes a directory's contents with it).
function patternRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*' && pattern[i + 1] === '*') {
      source += '.*';
      i++;
      if (pattern[i + 1] === '/') i++;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}(?:/.*)?$`);
}

/**
 * A build-context filter from .dockerignore text: the last matching pattern decides, `!` admits
 * again. Patterns are cleaned as the engine cleans them (leading `/` and `./` dropped, trailing
 * `/` dropped).
 */
export function dockerignoreFilter(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const admit = line.startsWith('!');
      const cleaned = posix.normalize((admit ? line.slice(1) : line).trim()).replace(/^\.?\//, '').replace(/\/$/, '');
      return { admit, regexp: patternRegExp(cleaned) };
    });
  return (path: string): boolean => {
    const cleaned = posix.normalize(path).replace(/^\.?\//, '').replace(/\/$/, '');
    let included = true;
    for (const rule of rules) {
      if (rule.regexp.test(cleaned)) included = rule.admit;
    }
    return included;
  };
}
