import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { TotpEnrolment } from '../components/TotpEnrolment.jsx';
import { useResource } from '../hooks.js';

/**
 * The signed-in user's own second factor (GET /auth/mfa): its state, and setting up the
 * authenticator app when there is none. Turning it off is an administrator's reset (Users).
 */
export function SecondFactor() {
  const { call } = useAuth();
  const status = useResource(() => call('/auth/mfa'), [call]);
  const send = (path, body) => call(path, { method: 'POST', body });
  const mfa = status.data;
  return (
    <>
      <h1>Second factor</h1>
      <OutageBanner error={status.error} onRetry={status.reload} />
      {status.loading && !mfa && <p role="status">Loading…</p>}
      {mfa?.totp === 'enrolled' && (
        <dl className="facts">
          <dt>Authenticator app</dt><dd>On since {new Date(mfa.enrolled_at).toLocaleString()}</dd>
          <dt>Recovery codes left</dt><dd>{mfa.recovery_codes_left}</dd>
        </dl>
      )}
      {mfa && mfa.totp !== 'enrolled' && (
        <>
          <p>{mfa.required_by_account
            ? 'Your account requires a second factor: set it up now.'
            : 'No second factor yet: sign-in asks only for your password.'}</p>
          <TotpEnrolment send={send} onFinished={status.reload} />
        </>
      )}
    </>
  );
}
