import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { ApiError, SESSION_ENDED, request } from './api.js';
import { delayUntil, refreshAt, storeToken, storedToken } from './session.js';

const AuthContext = createContext(null);

/**
 * The session: the token (localStorage `admin_auth_token`), the user and account of the login
 * body, a refresh scheduled before expiry, and `call()` — every API request of the screens goes
 * through it, so an ended session (401) sends the user to the login page with the address of
 * the page they were on, and back there after signing in.
 */
export function AuthProvider({ children }) {
  const [token, setToken] = useState(() => storedToken());
  const [identity, setIdentity] = useState(null); // {user, account} of the login body
  const [checking, setChecking] = useState(() => Boolean(storedToken()));
  const [notice, setNotice] = useState(null);
  const navigate = useNavigate();
  const location = useLocation();
  const here = useRef('/');
  here.current = location.pathname + location.search;

  const accept = useCallback((body) => {
    storeToken(body.token);
    setToken(body.token);
    setIdentity({ user: body.user, account: body.account });
  }, []);

  const endSession = useCallback((message) => {
    storeToken(null);
    setToken(null);
    setIdentity(null);
    setNotice(message || null);
    const next = here.current.startsWith('/login') ? '/' : here.current;
    navigate(`/login?next=${encodeURIComponent(next)}`, { replace: true });
  }, [navigate]);

  // a stored token: check it (and learn who we are) by refreshing it once at start
  useEffect(() => {
    const stored = storedToken();
    if (!stored) return;
    request('/auth/refresh', { method: 'POST', token: stored })
      .then(accept)
      .catch((err) => {
        if (err instanceof ApiError && err.status === 401) endSession('Your session has ended. Sign in again.');
        else setNotice('The server could not be reached to check your session.');
      })
      .finally(() => setChecking(false));
  }, []); // eslint-disable-line react-hooks/exhaustive-deps

  // refresh before expiry (the session's end goes through a ref: the timer is set once per token)
  const endRef = useRef(endSession);
  endRef.current = endSession;
  useEffect(() => {
    if (!token) return undefined;
    const at = refreshAt(token);
    if (!at) return undefined;
    const timer = setTimeout(() => {
      request('/auth/refresh', { method: 'POST', token })
        .then(accept)
        .catch((err) => {
          if (err instanceof ApiError && err.status === 401) endRef.current('Your session has ended. Sign in again.');
        });
    }, delayUntil(at, Date.now()));
    return () => clearTimeout(timer);
  }, [token, accept]);

  // stable for the whole session (the screens load with it as a dependency): the session's end
  // goes through the ref, whose target changes with the router's location
  const call = useCallback(async (path, options = {}) => {
    try {
      return await request(path, { ...options, token: storedToken() });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401 && SESSION_ENDED.has(err.code)) {
        endRef.current(err.code === 'token_expired' ? 'Your session has expired. Sign in again.'
          : 'Your session has ended. Sign in again.');
      }
      throw err;
    }
  }, []);

  const logout = useCallback(async () => {
    const current = storedToken();
    storeToken(null); // cleared first: a failed server call must not leave the user signed in here
    let message = 'You are signed out.';
    if (current) {
      try {
        await request('/auth/logout', { method: 'POST', token: current });
      } catch {
        // the token is gone from this browser; the server could not revoke it, so say so
        message = 'You are signed out here, but the server could not be told: the session ends when it expires.';
      }
    }
    setToken(null);
    setIdentity(null);
    setNotice(message);
    navigate('/login', { replace: true });
  }, [navigate]);

  const value = useMemo(() => ({
    token, identity, checking, notice, setNotice, accept, call, logout,
    licenses: identity?.account?.licenses || [],
  }), [token, identity, checking, notice, accept, call, logout]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth() {
  return useContext(AuthContext);
}
