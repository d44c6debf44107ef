// One pool of kept-alive connections per client for the agent's API calls. The client library
// builds a fresh http(s).Agent for every call, so each call opened its own TCP connection and
// did a full TLS handshake: the API server paid a handshake for each of an eviction's requests,
// N times over in a fleet-wide storm. The calls now share one keep-alive agent made with the
// same options (CA, client certificate, server name), replaced only when those change (rotated
// credentials); idle connections close after a while, so an agent at rest holds none. Agents
// through a proxy are left as the library made them.

import http from 'node:http';
import https from 'node:https';

/** An idle connection is closed after this long: in a storm the next call comes within it, at rest none does. */
export const IDLE_CONNECTION_MS = 30_000;

// What makes two agents' connections interchangeable: everything that reaches the TLS handshake.
const TLS_OPTIONS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername', 'ciphers', 'secureProtocol', 'secureOptions'] as const;

function optionsKey(agent: http.Agent): string {
  const options = (agent as http.Agent & { options?: Record<string, unknown> }).options ?? {};
  const text = (value: unknown): unknown => (Buffer.isBuffer(value) ? value.toString('base64') : Array.isArray(value) ? value.map(text) : value);
  return JSON.stringify([agent instanceof https.Agent ? 'https' : 'http', ...TLS_OPTIONS.map((name) => text(options[name]) ?? null)]);
}

export class KeptConnections {
  private kept: { readonly key: string; readonly agent: http.Agent } | null = null;

  /** The agent to send a call through instead of `made` (the one the library made for it). */
  agentFor(made: http.Agent | undefined): http.Agent | undefined {
    // Only the library's plain agents: a proxy's agent (a subclass) keeps its own behaviour.
    if (made === undefined || (made.constructor !== http.Agent && made.constructor !== https.Agent)) return made;
    const key = optionsKey(made);
    if (this.kept?.key !== key) {
      const options = { ...(made as http.Agent & { options?: https.AgentOptions }).options, keepAlive: true, timeout: IDLE_CONNECTION_MS };
      this.kept = { key, agent: made instanceof https.Agent ? new https.Agent(options) : new http.Agent(options) };
    }
    return this.kept.agent;
  }
}
