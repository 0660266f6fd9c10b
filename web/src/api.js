/**
 * The one way the console talks to the server: same-origin fetch of /api and /auth with the
 * Bearer token, every failure turned into an ApiError carrying the API's stable `code`.
 * A network failure (no answer at all) is the code `network_error`, status 0.
 */

export class ApiError extends Error {
  constructor(status, code, message, details, retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details ?? null;
    this.retryAfter = retryAfter ?? null;
  }

  /** The server or the network failed (not the input): the page shows a banner with retry. */
  get isOutage() {
    return this.status === 0 || this.status >= 500;
  }
}

/** 401 codes that mean "this session is over": sign in again, then come back. */
export const SESSION_ENDED = new Set(['missing_token', 'invalid_token', 'token_expired', 'token_revoked',
  'tenant_mismatch']);

async function parse(response) {
  if (response.status === 204) return null;
  const type = response.headers.get('content-type') || '';
  if (type.includes('json')) return response.json();
  return response.text();
}

/**
 * fetch(path) with JSON in and out. `token`: the Bearer token (none for /auth/login).
 * Resolves with the parsed body; rejects with ApiError.
 */
export async function request(path, { method = 'GET', body, token, query, signal } = {}) {
  let url = path;
  if (query) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== null && value !== '') params.set(key, value);
    }
    const text = params.toString();
    if (text) url += `?${text}`;
  }
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
    throw new ApiError(0, 'network_error', 'The server could not be reached.');
  }
  let data = null;
  try {
    data = await parse(response);
  } catch {
    data = null;
  }
  if (!response.ok) {
    const retry = Number(response.headers.get('retry-after')) || null;
    const code = (data && data.code) || (response.status >= 500 ? 'internal_error' : 'http_error');
    const message = (data && data.message) || `The server answered ${response.status}.`;
    throw new ApiError(response.status, code, message, data && data.details, retry);
  }
  return data;
}
