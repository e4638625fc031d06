// The control API (docs/protocol.md): JSON replies `{"ok": true, "data"}` or
// `{"ok": false, "error": {code, message, field?}}`, and a bearer token when
// the page was opened with `?token=…`.

export const token = new URLSearchParams(location.search).get('token');

/** An API refusal, carrying the reply's `code`, `message` and `field`. */
export class ApiError extends Error {
  constructor({ code, message, field }) {
    super(message);
    this.code = code;
    this.field = field;
  }
}

/** Calls `method path` with an optional JSON body; resolves to `data`. */
export async function call(method, path, body) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const reply = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let json;
  try {
    json = await reply.json();
  } catch {
    throw new ApiError({ code: 'internal', message: `${method} ${path}: HTTP ${reply.status} without a JSON reply` });
  }
  if (!json.ok) throw new ApiError(json.error ?? { code: 'internal', message: `HTTP ${reply.status}` });
  return json.data;
}

/** The stream's WebSocket URL on this page's host, with the token if any. */
export function streamUrl(query) {
  const params = new URLSearchParams(query);
  if (token) params.set('token', token);
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}/v1/stream?${params}`;
}
