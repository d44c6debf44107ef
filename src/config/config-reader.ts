// Reads typed values out of a parsed YAML document and collects every problem with its field path,
// raw value and line, instead of stopping at the first. The rules are the kubelet's JSON decoding
// rules: a string field takes only a string (`100` must be quoted), a boolean only true/false, an
// int32 only an integer, a duration only a Go duration string; null counts as absent.

import { isAlias, isMap, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair } from 'yaml';
import type { ConfigProblem } from '../errors.js';
import { didYouMean } from './did-you-mean.js';
import { GoDurationError, parseGoDuration } from './go-duration.js';

/** One key of a YAML map, with the nodes its problems point at. */
export interface MapEntry {
  readonly key: string;
  /** The field path of the value (`observe.cgroupRoot`, `evictionHard["memory.available"]`). */
  readonly field: string;
  readonly keyNode: Node | null;
  readonly valueNode: Node | null;
}

/** One string item of a YAML list. */
export interface ListItem {
  readonly value: string;
  readonly index: number;
  readonly field: string;
  readonly node: Node | null;
}

export type EntryHandler = (entry: MapEntry) => void;

// YAML 1.2 core-schema integers: decimal, octal (0o) and hexadecimal (0x).
const INTEGER_LITERAL = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  return `the ${typeof value} ${String(value)}`;
}

export class ConfigReader {
  readonly problems: ConfigProblem[] = [];
  readonly warnings: ConfigProblem[] = [];

  constructor(
    private readonly doc: Document,
    private readonly lineCounter: LineCounter,
  ) {}

  /** The 1-based line a node starts on, when the parser recorded one. */
  lineOf(node: Node | null | undefined): number | undefined {
    const offset = node?.range?.[0];
    return offset === undefined ? undefined : this.lineCounter.linePos(offset).line;
  }

  /** The plain value of a node (maps and lists as objects and arrays), for reports. */
  rawValue(node: Node | null): unknown {
    const resolved = this.resolve(node);
    return resolved === null ? null : (resolved.toJSON() as unknown);
  }

  problem(field: string, node: Node | null, message: string, value: unknown = this.rawValue(node)): void {
    this.problems.push(withLine({ field, value, message }, this.lineOf(node)));
  }

  warning(field: string, node: Node | null, message: string, value: unknown = this.rawValue(node)): void {
    this.warnings.push(withLine({ field, value, message }, this.lineOf(node)));
  }

  /** Follows aliases (`*anchor`); null for an absent node, a null scalar or an undefined alias. */
  resolve(node: Node | null | undefined): Node | null {
    let current: unknown = node ?? null;
    for (let hops = 0; isAlias(current) && hops < 100; hops++) current = current.resolve(this.doc) ?? null;
    if (current === null || isAlias(current)) return null;
    if (isScalar(current) && current.value === null) return null;
    return current as Node;
  }

  /** True when the value is absent or null (the kubelet then keeps its default). */
  isAbsent(node: Node | null): boolean {
    return this.resolve(node) === null;
  }

  /**
   * The entries of a map, or null (with a problem) when the node is not a map. `childField`
   * names each entry's path; the default is `parent.key`.
   */
  entries(node: Node | null, field: string, childField: (key: string) => string = (key) => (field === '' ? key : `${field}.${key}`)): MapEntry[] | null {
    const resolved = this.resolve(node);
    if (resolved !== null && !isMap(resolved)) {
      this.problem(field, node, `must be a map, not ${describe(this.rawValue(node))}`);
      return null;
    }
    return this.entriesQuietly(node, childField) ?? [];
  }

  /** The entries of a map (none when absent), or null when the node is not a map; reports nothing. */
  entriesQuietly(node: Node | null, childField: (key: string) => string): MapEntry[] | null {
    const resolved = this.resolve(node);
    if (resolved === null) return [];
    if (!isMap(resolved)) return null;
    return resolved.items.map((pair: Pair) => {
      const keyNode = this.resolve(pair.key as Node | null);
      const key = keyNode !== null && isScalar(keyNode) ? String(keyNode.value) : JSON.stringify(keyNode?.toJSON() ?? null);
      return { key, field: childField(key), keyNode: (pair.key as Node | null) ?? null, valueNode: (pair.value as Node | null) ?? null };
    });
  }

  /**
   * Walks a map with one handler per known key; an unknown key is an error naming the closest
   * known one. Returns false when the node is not a map.
   */
  section(node: Node | null, field: string, handlers: Readonly<Record<string, EntryHandler>>): boolean {
    const list = this.entries(node, field);
    if (list === null) return false;
    for (const entry of list) {
      const handler = Object.hasOwn(handlers, entry.key) ? handlers[entry.key] : undefined;
      if (handler === undefined) {
        this.unknownField(entry, Object.keys(handlers));
        continue;
      }
      handler(entry);
    }
    return true;
  }

  unknownField(entry: MapEntry, known: readonly string[]): void {
    const suggestion = didYouMean(entry.key, known);
    const hint = suggestion === null ? '' : `; did you mean ${suggestion}?`;
    this.problem(entry.field, entry.keyNode, `unknown field ${JSON.stringify(entry.key)}${hint}`, entry.key);
  }

  /** A string scalar; a number or boolean is refused (quote it), as the kubelet's decoder does. */
  string(node: Node | null, field: string, example = ''): string | undefined {
    const resolved = this.resolve(node);
    if (resolved === null) return undefined;
    if (isScalar(resolved) && typeof resolved.value === 'string') return resolved.value;
    const raw = this.rawValue(node);
    const hint = isScalar(resolved) && (typeof raw === 'number' || typeof raw === 'boolean') ? ` (quote it: "${resolved.source ?? String(raw)}")` : '';
    this.problem(field, node, `must be a string${example === '' ? '' : ` such as ${example}`}, not ${describe(raw)}${hint}`);
    return undefined;
  }

  /** true or false (YAML 1.2: `yes`, `on` and the like are strings, and refused). */
  boolean(node: Node | null, field: string): boolean | undefined {
    const resolved = this.resolve(node);
    if (resolved === null) return undefined;
    if (isScalar(resolved) && typeof resolved.value === 'boolean') return resolved.value;
    this.problem(field, node, `must be true or false, not ${describe(this.rawValue(node))}`);
    return undefined;
  }

  /** An integer in [min, max]. */
  integer(node: Node | null, field: string, min: number, max: number): number | undefined {
    const resolved = this.resolve(node);
    if (resolved === null) return undefined;
    const raw = this.rawValue(node);
    // `30.0` is a whole number but not an integer literal, and Go's decoder refuses it for an int32.
    const literal = isScalar(resolved) && typeof raw === 'number' ? (resolved.source ?? String(raw)) : '';
    if (!isScalar(resolved) || typeof raw !== 'number' || !INTEGER_LITERAL.test(literal)) {
      this.problem(field, node, `must be an integer, not ${typeof raw === 'number' ? `the number ${literal}` : describe(raw)}`);
      return undefined;
    }
    if (raw < min || raw > max) {
      this.problem(field, node, `must be between ${min} and ${max}: ${raw}`);
      return undefined;
    }
    return raw;
  }

  /** One of a fixed set of strings. */
  enumeration<T extends string>(node: Node | null, field: string, allowed: readonly T[]): T | undefined {
    const value = this.string(node, field, allowed.map((a) => JSON.stringify(a)).join(' or '));
    if (value === undefined) return undefined;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    const suggestion = didYouMean(value, allowed);
    const hint = suggestion === null ? '' : ` (did you mean ${JSON.stringify(suggestion)}?)`;
    this.problem(field, node, `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, not ${JSON.stringify(value)}${hint}`);
    return undefined;
  }

  /** A Go duration string, in milliseconds. */
  duration(node: Node | null, field: string): { ms: number; raw: string } | undefined {
    const raw = this.string(node, field, 'a Go duration like "30s"');
    if (raw === undefined) return undefined;
    try {
      return { ms: parseGoDuration(raw), raw };
    } catch (err) {
      if (!(err instanceof GoDurationError)) throw err;
      this.problem(field, node, err.message);
      return undefined;
    }
  }

  /**
   * A map of string to string (the kubelet's `map[string]string`), entries named `field["key"]`.
   * Undefined when absent (or not a map); entries of the wrong type are reported and left out.
   */
  stringMap(node: Node | null, field: string, example: string): Record<string, string> | undefined {
    const resolved = this.resolve(node);
    if (resolved === null) return undefined;
    if (isScalar(resolved) && typeof resolved.value === 'string' && /[<=]/.test(resolved.value)) {
      this.problem(field, node, `must be a map of signal to value; the command-line form ${JSON.stringify(resolved.value)} is not accepted in a file`);
      return undefined;
    }
    const list = this.entries(node, field, (key) => `${field}[${JSON.stringify(key)}]`);
    if (list === null) return undefined;
    // Entries of the wrong type are reported and left out; the rest are still validated.
    // No prototype: a key such as `__proto__` must stay a key, and be reported as a bad signal.
    const out: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const entry of list) {
      const value = this.string(entry.valueNode, entry.field, example);
      if (value === undefined) {
        if (this.isAbsent(entry.valueNode)) this.problem(entry.field, entry.valueNode ?? entry.keyNode, `must be a string such as ${example}, not null`, null);
        continue;
      }
      out[entry.key] = value;
    }
    return out;
  }

  /**
   * A list of strings, items named `field[i]`: undefined when absent (or not a list); items of the
   * wrong type are reported and left out, the others keep their index and node.
   */
  stringList(node: Node | null, field: string): ListItem[] | undefined {
    const resolved = this.resolve(node);
    if (resolved === null) return undefined;
    if (!isSeq(resolved)) {
      this.problem(field, node, `must be a list of strings, not ${describe(this.rawValue(node))}`);
      return undefined;
    }
    const out: ListItem[] = [];
    resolved.items.forEach((item, index) => {
      const itemNode = (item as Node | null) ?? null;
      const itemField = `${field}[${index}]`;
      const value = this.string(itemNode, itemField);
      if (value !== undefined) out.push({ value, index, field: itemField, node: itemNode });
      else if (this.isAbsent(itemNode)) this.problem(itemField, itemNode, 'must be a string, not null', null);
    });
    return out;
  }
}

function withLine(problem: ConfigProblem, line: number | undefined): ConfigProblem {
  return line === undefined ? problem : { ...problem, line };
}
