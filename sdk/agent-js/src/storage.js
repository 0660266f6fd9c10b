/**
 * Token storage (SPEC Authentication: "Browser local storage under the key `admin_auth_token`,
 * and a separate key for the agent token. No cookies.").
 *
 * A storage is anything with the Web Storage methods `getItem`, `setItem`, `removeItem`
 * (window.localStorage, sessionStorage, or your own for node/React Native/Electron). The SDK
 * stores the raw JWT only; its expiry is read from the token itself.
 */

/** Key of the admin web UI's token (read by `exchange()` when no token is passed). */
export const ADMIN_TOKEN_KEY = 'admin_auth_token';
/** Key of the agent session's token, separate from the admin one. */
export const AGENT_TOKEN_KEY = 'agent_auth_token';

/** @typedef {import('../types/index.js').TokenStorage} TokenStorage */

/**
 * In-memory storage: the default where no `localStorage` exists (node, workers).
 * @returns {TokenStorage}
 */
export function memoryStorage() {
  /** @type {Map<string, string>} */
  const items = new Map();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => { items.set(key, String(value)); },
    removeItem: (key) => { items.delete(key); },
  };
}

/**
 * The browser's localStorage when it exists and works (it throws in some private modes).
 * @returns {TokenStorage}
 */
export function defaultStorage() {
  try {
    const storage = globalThis.localStorage;
    if (storage) {
      const probe = '__saas_sbc_probe__';
      storage.setItem(probe, '1');
      storage.removeItem(probe);
      return storage;
    }
  } catch {
    // private mode or a sandboxed frame: fall back to memory, the session still works
  }
  return memoryStorage();
}

/**
 * The claims of a JWT, without verifying it (the server verifies; the SDK only needs `exp`
 * and `iat` to refresh in time).
 * @param {string} token
 * @returns {{exp?: number, iat?: number, sub?: string, tenant?: string, session?: string} | null}
 */
export function decodeClaims(token) {
  try {
    const part = String(token).split('.')[1];
    const base64 = part.replace(/-/g, '+').replace(/_/g, '/');
    const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
    const json = typeof atob === 'function'
      ? decodeURIComponent(Array.from(atob(padded), (c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0')).join(''))
      : /** @type {any} */ (globalThis).Buffer.from(padded, 'base64').toString('utf8'); // no atob: node's Buffer
    return JSON.parse(json);
  } catch {
    return null;
  }
}
