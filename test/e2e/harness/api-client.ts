// The tests' own client for the Kubernetes API: plain HTTPS JSON requests with a bearer token,
// trusting the harness's serving certificate. It is deliberately not the product's client
// (src/kube): the tests check what the product did through an independent path, and see every
// status code and Status body exactly as the API server sent them.

import { Agent, request as httpsRequest } from 'node:https';

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface ApiResponse<T = unknown> {
  readonly status: number;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  readonly body: T;
  readonly text: string;
}

/** A non-2xx answer, with the API server's Status body. */
export class ApiError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    const message = typeof body === 'object' && body !== null && 'message' in body ? String((body as { message: unknown }).message) : JSON.stringify(body);
    super(`${method} ${path} answered ${status}: ${message}`);
  }
}

export const CONTENT_TYPE = {
  json: 'application/json',
  mergePatch: 'application/merge-patch+json',
  strategicMergePatch: 'application/strategic-merge-patch+json',
  jsonPatch: 'application/json-patch+json',
  applyPatch: 'application/apply-patch+yaml',
} as const;

export interface RequestOptions {
  readonly query?: Query | undefined;
  readonly body?: unknown;
  readonly contentType?: string;
  /** Gives up after this long (default 15 s). */
  readonly timeoutMs?: number;
}

/** One watch stream; `done` resolves when it ends for any reason. */
export interface WatchStream {
  readonly done: Promise<{ readonly error?: Error; readonly status?: number | undefined }>;
  stop(): void;
}

export interface WatchEvent<T = unknown> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: T;
}

function withQuery(path: string, query: Query | undefined): string {
  if (query === undefined) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text === '' ? path : `${path}${path.includes('?') ? '&' : '?'}${text}`;
}

export class ApiClient {
  private readonly url: URL;
  private readonly agent: Agent;

  /**
   * No keep-alive by default: a connection cached across an API server restart would fail the next
   * request. `keepAlive` is for clients that make thousands of requests (a fleet's set-up, its
   * kubelets' deletions, a client measured beside it), each of which would otherwise cost the API
   * server a TLS handshake, as no real client does.
   */
  constructor(
    readonly server: string,
    caPem: string,
    readonly token: string | null,
    options: { readonly keepAlive?: boolean } = {},
  ) {
    this.url = new URL(server);
    this.agent = new Agent({ keepAlive: options.keepAlive === true, ca: caPem });
  }

  /** Any request; never throws for an HTTP status (only for a network failure or a timeout). */
  request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const fullPath = withQuery(path, options.query);
    const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.token !== null) headers.Authorization = `Bearer ${this.token}`;
    if (payload !== undefined) {
      headers['Content-Type'] = options.contentType ?? CONTENT_TYPE.json;
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      const req = httpsRequest({ host: this.url.hostname, port: this.url.port, method, path: fullPath, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: body as T, text });
        });
        res.on('error', reject);
      });
      req.setTimeout(options.timeoutMs ?? 15_000, () => req.destroy(new Error(`${method} ${fullPath}: no answer within ${options.timeoutMs ?? 15_000} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** A request that must succeed (2xx); resolves with the body. */
  async expectOk<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.request<T>(method, path, options);
    if (response.status < 200 || response.status >= 300) throw new ApiError(method, path, response.status, response.body ?? response.text);
    return response.body;
  }

  get<T = unknown>(path: string, query?: Query): Promise<T> {
    return this.expectOk<T>('GET', path, { query });
  }

  create<T = unknown>(path: string, body: unknown, query?: Query): Promise<T> {
    return this.expectOk<T>('POST', path, { body, query });
  }

  patch<T = unknown>(path: string, body: unknown, contentType: string = CONTENT_TYPE.mergePatch, query?: Query): Promise<T> {
    return this.expectOk<T>('PATCH', path, { body, contentType, query });
  }

  delete<T = unknown>(path: string, body?: unknown, query?: Query): Promise<T> {
    return this.expectOk<T>('DELETE', path, { body, query });
  }

  /**
   * Opens a watch (`?watch=true` plus `query`) and calls `onEvent` for every event line. The
   * stream ends when the server closes it, on an error, or on stop().
   */
  watch<T = unknown>(path: string, query: Query, onEvent: (event: WatchEvent<T>) => void): WatchStream {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.token !== null) headers.Authorization = `Bearer ${this.token}`;
    const fullPath = withQuery(path, { ...query, watch: true });
    let stopped = false;
    let finish: (outcome: { error?: Error; status?: number | undefined }) => void = () => undefined;
    const done = new Promise<{ error?: Error; status?: number | undefined }>((resolve) => {
      let settled = false;
      finish = (outcome) => {
        if (settled) return;
        settled = true;
        resolve(outcome);
      };
    });
    const req = httpsRequest({ host: this.url.hostname, port: this.url.port, method: 'GET', path: fullPath, headers, agent: this.agent }, (res) => {
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => finish({ status: res.statusCode, error: new Error(`watch ${fullPath} answered ${res.statusCode}: ${text}`) }));
        return;
      }
      let buffered = '';
      res.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line === '' || stopped) continue;
          try {
            onEvent(JSON.parse(line) as WatchEvent<T>);
          } catch (err) {
            finish({ error: err instanceof Error ? err : new Error(String(err)) });
            req.destroy();
            return;
          }
        }
      });
      res.on('end', () => finish({ status: 200 }));
      res.on('error', (error) => finish({ error }));
      res.on('close', () => finish({ status: 200 }));
    });
    req.on('error', (error) => finish({ error }));
    req.end();
    return {
      done,
      stop: () => {
        stopped = true;
        req.destroy();
        finish({});
      },
    };
  }
}
