import { Link } from 'react-router';
import { OutageBanner } from '../components/Banner.jsx';
import { humanMessage } from '../messages.js';

/** A form's frame: the outage banner (Retry saves again), the error that belongs to no field,
 * the fields, the submit button and, after an edit was saved, "Saved.". */
export function SaveForm({ save, label, savedNote = false, className, ariaLabel, children }) {
  return (
    <form className={className} onSubmit={save.submit} noValidate aria-label={ariaLabel}>
      <OutageBanner error={save.outage} onRetry={save.submit} />
      {save.form && <p className="form-error" role="alert">{save.form}</p>}
      {children}
      <button type="submit" disabled={save.busy}>{label}</button>
      {savedNote && save.saved && <p className="saved" role="status">Saved.</p>}
    </form>
  );
}

/** A page whose item could not be read: the banner with Retry for an outage, else the reason. */
export function LoadFailed({ title, error, onRetry, back, backLabel }) {
  return (
    <>
      <h1>{title}</h1>
      {error.isOutage ? <OutageBanner error={error} onRetry={onRetry} /> : <p role="alert">{humanMessage(error)}</p>}
      <p><Link to={back}>{backLabel}</Link></p>
    </>
  );
}
