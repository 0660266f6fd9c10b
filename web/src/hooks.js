import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from './api.js';

/**
 * Load something for a screen: {data, error, loading, reload}. An outage (500, network) is kept
 * in `error` for the banner; the last data stays on screen meanwhile.
 */
export function useResource(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const seq = useRef(0);
  const run = useCallback(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => { if (mine === seq.current) setState({ data, error: null, loading: false }); },
      (error) => {
        if (mine !== seq.current) return;
        setState((s) => ({ ...s, error: error instanceof ApiError ? error : new ApiError(0, 'network_error', String(error)), loading: false }));
      },
    );
  }, deps); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => { run(); }, [run]);
  return { ...state, reload: run, setData: (data) => setState((s) => ({ ...s, data })) };
}

/**
 * Form values that survive a failed save and a sign-in in between: kept in sessionStorage under
 * `key` until `clear()` (after a successful save). `secretFields` are never written to storage.
 */
export function useDraft(key, initial, secretFields = []) {
  const storageKey = `console:draft:${key}`;
  const [values, setValues] = useState(() => {
    try {
      const saved = JSON.parse(sessionStorage.getItem(storageKey) || 'null');
      return saved ? { ...initial, ...saved } : initial;
    } catch {
      return initial;
    }
  });
  const [dirty, setDirty] = useState(() => Boolean(sessionStorage.getItem(storageKey)));
  const set = useCallback((name, value) => {
    setValues((v) => {
      const next = { ...v, [name]: value };
      const kept = Object.fromEntries(Object.entries(next).filter(([k]) => !secretFields.includes(k)));
      sessionStorage.setItem(storageKey, JSON.stringify(kept));
      return next;
    });
    setDirty(true);
  }, [storageKey]); // eslint-disable-line react-hooks/exhaustive-deps
  const reset = useCallback((fresh) => {
    sessionStorage.removeItem(storageKey);
    setValues(fresh);
    setDirty(false);
  }, [storageKey]);
  return { values, set, reset, dirty };
}

/**
 * A form's save: `submit(event)` runs `action()` once at a time, with `busy` while it runs and
 * its ApiError kept in `error` (the form keeps what was typed; the screen decides where the
 * error goes).
 */
export function useSubmit(action) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const submit = async (event) => {
    event?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, submit };
}
