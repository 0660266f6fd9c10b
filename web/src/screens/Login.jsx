import { useEffect, useState } from 'react';
import { Navigate, useNavigate, useSearchParams } from 'react-router';
import { ApiError, request } from '../api.js';
import { useAuth } from '../auth.jsx';
import { Field } from '../components/Field.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { TotpEnrolment } from '../components/TotpEnrolment.jsx';
import { errorsByField } from '../messages.js';
import { safeNext, tenantFromHost } from '../session.js';
import { startSso } from './sso.js';

/**
 * Sign in to the tenant the host name names: username and password (POST /auth/login); when
 * the API answers 401 `mfa_required`, the authenticator code step (POST /auth/login/mfa); when
 * it answers 403 `mfa_enrolment_required`, setting up the authenticator with the enrolment
 * token. "Sign in with …" when the account has single sign-on (GET /auth/sso).
 * Then back to the page the user was on (`?next=`).
 */
export function Login() {
  const auth = useAuth();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const next = safeNext(params.get('next'));
  const tenant = tenantFromHost(window.location.hostname);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [challenge, setChallenge] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [enrolmentToken, setEnrolmentToken] = useState(null);
  const [sso, setSso] = useState(null); // GET /auth/sso: {enabled, display_name, start_url}

  useEffect(() => {
    // no option shown when this fails: the password form still works
    request('/auth/sso').then(setSso, () => setSso(null));
  }, []);

  function signedIn(body) {
    auth.setNotice(null);
    auth.accept(body);
    navigate(next, { replace: true });
  }

  if (auth.token && auth.identity) return <Navigate to={next} replace />;

  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = challenge
        ? await request('/auth/login/mfa', { method: 'POST', body: { challenge_token: challenge, code: code.trim() } })
        : await request('/auth/login', { method: 'POST', body: { username, password, session: 'admin' } });
      signedIn(body);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'mfa_required') {
        setChallenge(err.details.challenge_token);
        setPassword('');
      } else if (err instanceof ApiError && err.code === 'mfa_enrolment_required') {
        setEnrolmentToken(err.details.enrolment_token);
        setPassword('');
      } else {
        if (err instanceof ApiError && ['mfa_challenge_expired', 'invalid_mfa_challenge'].includes(err.code)) {
          setChallenge(null);
          setCode('');
        }
        setError(err);
      }
    } finally {
      setBusy(false);
    }
  }

  if (enrolmentToken) {
    const send = (path, body) => request(path, { method: 'POST', body: { ...body, enrolment_token: enrolmentToken } });
    return (
      <main className="login wide" id="main">
        <h1>Second factor required</h1>
        <p className="notice" role="status">Your account requires a second factor at sign-in. Set up an
          authenticator app now; you are signed in when it is done.</p>
        <TotpEnrolment send={send} onFinished={signedIn} />
      </main>
    );
  }

  const outage = error && error.isOutage ? error : null;
  const { fields, form } = errorsByField(outage ? null : error, ['username', 'password', 'code']);
  return (
    <main className="login" id="main">
      <h1>Sign in</h1>
      <p className="tenant">{tenant ? <>Account <strong>{tenant}</strong></> : 'Open the console at your account\'s address.'}</p>
      {auth.notice && <p className="notice" role="status">{auth.notice}</p>}
      <OutageBanner error={outage} />
      <form onSubmit={submit} noValidate>
        {form && <p className="form-error" role="alert">{form}</p>}
        {!challenge ? (
          <>
            <Field label="Username" error={fields.username}>
              {(p) => <input {...p} name="username" autoComplete="username" value={username}
                onChange={(e) => setUsername(e.target.value)} required />}
            </Field>
            <Field label="Password" error={fields.password}>
              {(p) => <input {...p} name="password" type="password" autoComplete="current-password"
                value={password} onChange={(e) => setPassword(e.target.value)} required />}
            </Field>
          </>
        ) : (
          <Field label="Authentication code" error={fields.code}
            hint="The 6-digit code of your authenticator app, or one of your recovery codes.">
            {(p) => <input {...p} name="code" autoComplete="one-time-code" inputMode="text" autoFocus
              value={code} onChange={(e) => setCode(e.target.value)} required />}
          </Field>
        )}
        <button type="submit" disabled={busy}>{challenge ? 'Verify' : 'Sign in'}</button>
      </form>
      {sso?.enabled && !challenge && (
        <p className="sso">
          <button type="button" className="secondary" onClick={() => startSso(sso.start_url, next)}>
            Sign in with {sso.display_name || 'single sign-on'}
          </button>
        </p>
      )}
    </main>
  );
}
