import { useCallback, useState } from 'react';
import { errorsByField } from '../messages.js';

/**
 * A form's save: {busy, error, saved, submit, fields, form}. `save()` runs the API calls; a
 * failure stays in `error` (outages for the banner, the rest beside the `known` fields) and the
 * form keeps what was typed, because nothing here resets it.
 */
export function useSubmit(save, known) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState(null);
  const submit = useCallback(async (event) => {
    event?.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      setSaved(await save() ?? true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, [save]);
  const { fields, form } = errorsByField(error && !error.isOutage ? error : null, known);
  return { busy, error, saved, submit, fields, form, outage: error?.isOutage ? error : null, clear: () => setSaved(null) };
}

/** A typed number field's value for the API: '' is "not given". */
export function optionalInt(text) {
  const trimmed = String(text ?? '').trim();
  return trimmed === '' ? undefined : Number(trimmed);
}

/** The body with the keys whose value is undefined left out (the API's defaults apply). */
export function defined(body) {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}
