// Timestamps as the API server writes them: RFC 3339 in UTC, to the second.

export function rfc3339(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}
