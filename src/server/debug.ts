// /debug/: a small router of named endpoints. Components add theirs through DebugRegistry; this
// file knows nothing about what they show.

import type { DebugRegistry, DebugRequest, DebugResponse } from '../contract/host';

interface Endpoint {
  description: string;
  handler: (req: DebugRequest) => DebugResponse | Promise<DebugResponse>;
}

const NAME = /^[a-z][a-z0-9_/-]*$/;

export class DebugRouter implements DebugRegistry {
  private readonly endpoints = new Map<string, Endpoint>();

  add(name: string, description: string, handler: Endpoint['handler']): void {
    if (!NAME.test(name)) throw new Error(`invalid debug endpoint name "${name}"`);
    if (this.endpoints.has(name)) throw new Error(`debug endpoint "${name}" is already registered`);
    this.endpoints.set(name, { description, handler });
  }

  /** The index page: every endpoint with its description, sorted by name. */
  index(): { endpoints: { path: string; description: string }[] } {
    return {
      endpoints: [...this.endpoints]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, e]) => ({ path: `/debug/${name}`, description: e.description })),
    };
  }

  /** Handles a path below /debug/ ("" for the index). */
  async handle(name: string, req: DebugRequest): Promise<DebugResponse> {
    if (name === '' || name === '/') return { body: this.index() };
    const endpoint = this.endpoints.get(name.replace(/\/$/, ''));
    if (!endpoint) return { status: 404, body: { error: `no debug endpoint "${name}"; see /debug/` } };
    return endpoint.handler(req);
  }
}
