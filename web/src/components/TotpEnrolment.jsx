import { useState } from 'react';
import { useSubmit } from '../hooks.js';
import { errorsByField } from '../messages.js';
import { Field } from './Field.jsx';
import { OutageBanner } from './Banner.jsx';

/**
 * Setting up the authenticator app (TOTP), for a signed-in user (their own page) and for a user
 * whose account requires a second factor at sign-in (403 `mfa_enrolment_required`).
 * `send(path, body)`: POST to /auth/mfa/totp[/confirm], carrying the session or the enrolment
 * token. The secret, its QR code and the recovery codes are answered once by the server, so
 * they live only in this component's state: never stored, gone when the user moves on.
 * `onFinished(login)`: after the recovery codes were acknowledged; `login` is the login body
 * when an enrolment token was confirmed, else null.
 */
export function TotpEnrolment({ send, onFinished }) {
  const [enrolment, setEnrolment] = useState(null); // {secret, otpauth_uri, qr_svg}
  const [code, setCode] = useState('');
  const [confirmed, setConfirmed] = useState(null); // {recovery_codes, login}
  const starting = useSubmit(async () => {
    setEnrolment(await send('/auth/mfa/totp', {}));
    setCode('');
  });
  const confirming = useSubmit(async () => setConfirmed(await send('/auth/mfa/totp/confirm', { code: code.trim() })));
  const error = confirming.error || starting.error;
  const busy = starting.busy || confirming.busy;

  const outage = error?.isOutage ? error : null;
  const { fields, form } = errorsByField(outage ? null : error, ['code']);
  if (confirmed) {
    return (
      <section aria-labelledby="recovery-codes" className="once">
        <h2 id="recovery-codes">Recovery codes</h2>
        <p role="status">Your second factor is on. These recovery codes are shown <strong>only now</strong>: keep
          them somewhere safe. Each one signs you in once when you do not have your authenticator app.</p>
        <ul className="codes">{confirmed.recovery_codes.map((c) => <li key={c}><code>{c}</code></li>)}</ul>
        <button type="button" onClick={() => onFinished(confirmed.login || null)}>I have saved my recovery codes</button>
      </section>
    );
  }
  return (
    <section aria-labelledby="totp-setup">
      <h2 id="totp-setup">Set up the authenticator app</h2>
      <OutageBanner error={outage} />
      {form && <p className="form-error" role="alert">{form}</p>}
      {!enrolment ? (
        <>
          <p>Use an authenticator app (a TOTP app) on your phone. After your password, sign-in will ask for the
            code it shows.</p>
          <button type="button" onClick={starting.submit} disabled={busy}>Start</button>
        </>
      ) : (
        <form onSubmit={confirming.submit} noValidate>
          <p>Scan this QR code with the app, or type the secret key in it. They are shown only now.</p>
          <img className="qr" src={enrolment.qr_svg} alt="QR code of the authenticator set-up" width="200" height="200" />
          <dl className="facts">
            <dt>Secret key</dt><dd><code>{enrolment.secret}</code></dd>
            <dt>Set-up address</dt><dd><code className="wrap">{enrolment.otpauth_uri}</code></dd>
          </dl>
          <Field label="Authentication code" error={fields.code} hint="The 6-digit code the app shows now, to prove it is set up.">
            {(p) => <input {...p} name="code" autoComplete="one-time-code" inputMode="numeric" value={code}
              onChange={(e) => setCode(e.target.value)} required />}
          </Field>
          <button type="submit" disabled={busy}>Confirm</button>
        </form>
      )}
    </section>
  );
}
