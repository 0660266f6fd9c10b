/**
 * Session rules of SPEC's Authentication table, as pure functions the tests can prove:
 * the tenant is the host name's first label, the token lives in localStorage under
 * `admin_auth_token` (no cookies), and it is refreshed before it expires.
 */

export const TOKEN_KEY = 'admin_auth_token';
/** Refresh this long before expiry (or at half the remaining life for a short token). */
export const REFRESH_MARGIN_MS = 5 * 60 * 1000;
/** Never schedule a refresh sooner than this (a token already about to expire). */
export const MIN_REFRESH_DELAY_MS = 1000;

/** The tenant subdomain the host name names (`acme.sbc.example` → `acme`), or null. */
export function tenantFromHost(hostname) {
  const labels = String(hostname || '').replace(/\.$/, '').split('.');
  if (labels.length < 2 || /^\d+$/.test(labels[labels.length - 1])) return null;
  return labels[0].toLowerCase();
}

function claims(token) {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part + '='.repeat((4 - (part.length % 4)) % 4)));
  } catch {
    return null;
  }
}

/**
 * When to refresh, in epoch ms: REFRESH_MARGIN_MS before expiry, or halfway through the life of
 * a short token. Fixed by the token (its `iat` and `exp`), not by when it is asked, so a screen
 * that schedules again does not push the refresh later.
 */
export function refreshAt(token) {
  const payload = claims(token);
  if (!payload || typeof payload.exp !== 'number') return null;
  const exp = payload.exp * 1000;
  const iat = typeof payload.iat === 'number' ? payload.iat * 1000 : exp - 2 * REFRESH_MARGIN_MS;
  const life = exp - iat;
  return life > 2 * REFRESH_MARGIN_MS ? exp - REFRESH_MARGIN_MS : iat + Math.floor(life / 2);
}

/** Milliseconds from `nowMs` until `atMs`, never less than MIN_REFRESH_DELAY_MS. */
export function delayUntil(atMs, nowMs) {
  return Math.max(MIN_REFRESH_DELAY_MS, Math.floor(atMs - nowMs));
}

/** A return address inside the console only (never another origin: `//evil`, `https:`). */
export function safeNext(next) {
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//') || next.includes('\\')) {
    return '/';
  }
  if (next === '/login' || next.startsWith('/login?')) return '/';
  return next;
}

export function storedToken(storage = globalThis.localStorage) {
  try { return storage.getItem(TOKEN_KEY); } catch { return null; }
}

export function storeToken(token, storage = globalThis.localStorage) {
  if (token) storage.setItem(TOKEN_KEY, token);
  else storage.removeItem(TOKEN_KEY);
}
