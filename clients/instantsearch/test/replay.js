// Replays recorded request/answer pairs (test/recorded, made by scripts/record.mjs): a fetch that
// answers a request only when the adapter sends exactly a recorded one (method, path and query, JSON
// body), and says which recorded requests were never sent.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

export const BASE = 'http://aisle.test';

export function loadPairs(name) {
  return JSON.parse(readFileSync(new URL(`./recorded/${name}.json`, import.meta.url), 'utf8'));
}

/** `ignore(body)`: the body as compared (e.g. without random event ids). */
export function replayer(pairs, { ignore = (b) => b } = {}) {
  const unused = new Set(pairs);
  const sent = [];
  async function fetch(url, init = {}) {
    const u = new URL(url);
    assert.equal(u.origin, BASE, `request to ${u.origin}`);
    const body = init.body ? JSON.parse(init.body) : null;
    sent.push({ method: init.method, path: u.pathname + u.search, body, headers: init.headers });
    const match = pairs.find(
      (p) =>
        p.request.method === init.method &&
        p.request.path === u.pathname + u.search &&
        JSON.stringify(ignore(p.request.body)) === JSON.stringify(ignore(body)),
    );
    if (!match) {
      throw new assert.AssertionError({ message: `no recorded answer for ${init.method} ${u.pathname}${u.search} ${JSON.stringify(body)}` });
    }
    unused.delete(match);
    return new Response(JSON.stringify(match.response.body), {
      status: match.response.status,
      headers: { 'Content-Type': 'application/json' },
    });
  }
  return { fetch, sent, unused: () => [...unused] };
}
