// Whether a URL's host is this machine's loopback interface (127.0.0.0/8, ::1, localhost): the
// one place a bearer token may travel over plain http, and only when a setting says so.

// The URL parser writes every IPv4 host in dotted decimal (`127.1` and `0x7f.0.0.1` become
// `127.0.0.1`) and refuses a numeric last label out of range, so a hostname of this form is one.
const LOOPBACK_IPV4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/**
 * True for a WHATWG URL `hostname` on loopback: an IPv4 address in 127.0.0.0/8, `[::1]` (the
 * parser's form of every spelling of ::1), or `localhost`. Nothing else, not even a name that
 * resolves to loopback: what a resolver answers can change.
 */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || LOOPBACK_IPV4.test(hostname);
}

/**
 * Why a bearer token may not be sent to `url`, or null when it may: over https always; over plain
 * http only to a loopback host, and only with `allowOverHttpLoopback`. The configuration refuses a
 * file that breaks this rule, and the client holds to it whatever settings a caller builds.
 */
export function cleartextTokenRefusal(url: URL, allowOverHttpLoopback: boolean): 'not-loopback' | 'loopback-not-allowed' | null {
  if (url.protocol === 'https:') return null;
  if (!isLoopbackHost(url.hostname)) return 'not-loopback';
  return allowOverHttpLoopback ? null : 'loopback-not-allowed';
}
