// The install commands the README documents, read out of README.md itself (the first bash block of
// its "Deployment" section), so the tests that run them (test/e2e/chart-install.e2e.test.ts, and the
// real-kubelet deployment suite) and the README cannot drift apart. Only simple commands are
// accepted (words, quotes, backslash line continuations): a pipe, a redirection or a variable in the
// block is refused, since running it would need a shell the test does not model.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './manifest.js';

export const README_PATH = join(REPO_ROOT, 'README.md');
export const DEPLOYMENT_DOC_PATH = join(REPO_ROOT, 'docs', 'deployment.md');

export interface ShellCommand {
  /** The command as written (continuations joined). */
  readonly text: string;
  readonly argv: readonly string[];
}

export interface CodeBlock {
  readonly lang: string;
  readonly body: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
}

/** The fenced code blocks of a markdown text, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] as string);
    if (open === null) continue;
    const end = lines.findIndex((l, j) => j > i && l.trimEnd() === '```');
    if (end < 0) throw new Error(`an unclosed code block at line ${i + 1}`);
    blocks.push({ lang: open[1] ?? '', body: lines.slice(i + 1, end).join('\n'), line: i + 1 });
    i = end;
  }
  return blocks;
}

/** The first block of `lang` after the heading `heading` (e.g. "## Deployment"). */
export function blockAfterHeading(markdown: string, heading: string, lang = 'bash'): CodeBlock {
  const lines = markdown.split('\n');
  const at = lines.findIndex((l) => l.trimEnd() === heading);
  if (at < 0) throw new Error(`no heading "${heading}"`);
  const block = codeBlocks(markdown).find((b) => b.line > at + 1 && b.lang === lang);
  if (block === undefined) throw new Error(`no ${lang} code block after "${heading}"`);
  return block;
}

// One word of a simple command: unquoted characters, '...' and "..." (no expansions inside).
function splitWords(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === ' ' || c === '\t') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'" || c === '"') {
      const close = text.indexOf(c, i + 1);
      if (close < 0) throw new Error(`an unclosed ${c} in: ${text}`);
      const inner = text.slice(i + 1, close);
      if (c === '"' && /[$`\\]/.test(inner)) throw new Error(`an expansion or escape inside "..." is not supported: ${text}`);
      word = (word ?? '') + inner;
      i = close;
    } else if (c === '\\') {
      word = (word ?? '') + (text[i + 1] ?? '');
      i++;
    } else if ('|&;<>$`(){}*?'.includes(c)) {
      throw new Error(`"${c}" needs a shell; only simple commands are supported: ${text}`);
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** The commands of a shell block: comments and blank lines dropped, continuations joined. */
export function shellCommands(body: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  const logical = body.replace(/\\\n\s*/g, ' ').split('\n');
  for (const raw of logical) {
    const text = raw.trim();
    if (text === '' || text.startsWith('#')) continue;
    commands.push({ text, argv: splitWords(text) });
  }
  return commands;
}

/** The README's install commands: the first bash block of its "## Deployment" section. */
export function readmeInstallCommands(): ShellCommand[] {
  return shellCommands(blockAfterHeading(readFileSync(README_PATH, 'utf8'), '## Deployment').body);
}

export interface CommandRun {
  readonly command: string;
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** The kubeconfig helm and kubectl use (as $KUBECONFIG). */
  readonly kubeconfig: string;
  /** The binaries that stand for `helm` and `kubectl` in the commands. */
  readonly binaries: Readonly<Record<string, string>>;
  /** Where helm keeps its cache, configuration and data (HELM_*_HOME), so nothing is written under $HOME. */
  readonly helmHome: string;
  readonly timeoutMs?: number;
}

/**
 * Runs each command from the repository root (the README's paths are relative to it), with the
 * program name replaced by its binary and $KUBECONFIG set; nothing else changes. Stops at the first
 * failure, which is the last result.
 */
export function runCommands(commands: readonly ShellCommand[], options: RunOptions): CommandRun[] {
  const runs: CommandRun[] = [];
  for (const command of commands) {
    const [program, ...args] = command.argv;
    const binary = options.binaries[program ?? ''];
    if (binary === undefined) throw new Error(`no binary given for "${program ?? ''}" (command: ${command.text})`);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      KUBECONFIG: options.kubeconfig,
      HOME: options.helmHome,
      HELM_CACHE_HOME: join(options.helmHome, 'cache'),
      HELM_CONFIG_HOME: join(options.helmHome, 'config'),
      HELM_DATA_HOME: join(options.helmHome, 'data'),
    };
    const run = spawnSync(binary, args, { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: options.timeoutMs ?? 120_000 });
    if (run.error !== undefined) throw run.error;
    runs.push({ command: command.text, status: run.status, stdout: run.stdout, stderr: run.stderr });
    if (run.status !== 0) break;
  }
  return runs;
}
