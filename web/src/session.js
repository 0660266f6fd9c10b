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

/** The token's `exp` in epoch ms (the JWT payload is readable; the server checks the signature). */
export function tokenExpiry(token) {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const payload = JSON.parse(atob(part + '='.repeat((4 - (part.length % 4)) % 4)));
    return typeof payload.exp === 'number' ? payload.exp * 1000 : null;
  } catch {
    return null;
  }
}

/** Milliseconds from `now` until the refresh: REFRESH_MARGIN_MS before expiry, or halfway. */
export function refreshDelay(expiresAtMs, nowMs) {
  const left = expiresAtMs - nowMs;
  const delay = left > 2 * REFRESH_MARGIN_MS ? left - REFRESH_MARGIN_MS : left / 2;
  return Math.max(MIN_REFRESH_DELAY_MS, Math.floor(delay));
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
