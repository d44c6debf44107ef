// Converts the client library's typed objects back to the API's JSON form. Lists and GETs come
// back from the library as model instances with Date timestamps, while watch events arrive as
// plain JSON: converting the former means the engine always sees one shape, the same one
// `kubectl get -o json` prints and the replay format carries.

/** RFC 3339 with second precision, as the API stores and prints `metav1.Time`. */
export function rfc3339(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

// A MicroTime read back from the API keeps its fraction; a Time has none to lose.
function dateToWire(date: Date): string | null {
  const ms = date.getTime();
  if (Number.isNaN(ms)) return null;
  return ms % 1000 === 0 ? rfc3339(ms) : date.toISOString();
}

/** A deep copy with Dates as RFC 3339 strings and undefined fields dropped. */
export function toWire<T>(value: unknown): T {
  return convert(value) as T;
}

function convert(value: unknown): unknown {
  if (value instanceof Date) return dateToWire(value);
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : convert(item)));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      if (field !== undefined) out[key] = convert(field);
    }
    return out;
  }
  return value;
}
