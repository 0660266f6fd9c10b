import { useId } from 'react';

/**
 * A labelled form control with its hint and its error beside it (aria-describedby, so a screen
 * reader reads the error with the field; aria-invalid marks it).
 * `children(props)`: renders the control with the id and aria props given.
 */
export function Field({ label, hint, error, children }) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const described = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-describedby': described, 'aria-invalid': error ? true : undefined })}
      {hint && <p className="hint" id={hintId}>{hint}</p>}
      {error && <p className="field-error" id={errorId}>{error}</p>}
    </div>
  );
}
