import { humanMessage } from '../messages.js';

/** A server or network failure, above the screen, with the way out: Retry. */
export function OutageBanner({ error, onRetry }) {
  if (!error) return null;
  return (
    <div className="banner" role="alert">
      <p>{humanMessage(error)}</p>
      {onRetry && <button type="button" onClick={onRetry}>Retry</button>}
    </div>
  );
}
