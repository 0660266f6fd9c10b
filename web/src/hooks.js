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
  return { ...state, reload: run, setData: (data) => setState((s) => ({ ...s, data: typeof data === 'function' ? data(s.data) : data })) };
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
 * A list the API pages by cursor: the first page through useResource (reloaded when `deps`
 * change), further pages appended by `loadMore()`. `moreError`: a failed further page (the
 * pages already shown stay).
 */
export function useCursorPages(call, path, query, deps) {
  const [more, setMore] = useState({ items: [], cursor: undefined, error: null });
  const list = useResource(() => {
    setMore({ items: [], cursor: undefined, error: null });
    return call(path, { query });
  }, deps);
  const items = [...(list.data?.items || []), ...more.items];
  const nextCursor = more.cursor === undefined ? list.data?.next_cursor : more.cursor;
  async function loadMore() {
    try {
      const page = await call(path, { query: { ...query, cursor: nextCursor } });
      setMore((m) => ({ items: [...m.items, ...page.items], cursor: page.next_cursor, error: null }));
    } catch (error) {
      setMore((m) => ({ ...m, error }));
    }
  }
  return { ...list, items, nextCursor, loadMore, moreError: more.error };
}

/**
 * A form's save: `submit(event)` runs `action` once at a time, keeping its failure in `error`
 * (shown beside the fields by the form) and `busy` while it runs.
 */
export function useSubmit(action) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  async function submit(event) {
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
  }
  return { submit, error, busy };
}
