import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { ApiError, request } from '../api.js';
import { useAuth } from '../auth.jsx';
import { humanMessage } from '../messages.js';
import { takeSsoNext } from './sso.js';

/**
 * Where the identity provider sends the browser back (`/console/login/sso?code&state`): the
 * code and state go to POST /auth/sso/callback, which answers the login body, so the token never
 * sits in an address. The state is single use, so the request is sent once per page, and the
 * address with the code is replaced by the page the user was going to.
 */
export function SsoCallback() {
  const auth = useAuth();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [error, setError] = useState(null);
  const sent = useRef(false);

  useEffect(() => {
    if (sent.current) return;
    sent.current = true;
    const code = params.get('code');
    const state = params.get('state');
    if (params.get('error') || !code || !state) {
      setError(new ApiError(401, 'sso_denied', params.get('error_description') || 'No sign-in came back.'));
      return;
    }
    request('/auth/sso/callback', { method: 'POST', body: { code, state } })
      .then((body) => {
        auth.setNotice(null);
        auth.accept(body);
        navigate(takeSsoNext(), { replace: true });
      }, setError);
  }, []); // eslint-disable-line react-hooks/exhaustive-deps

  return (
    <main className="login" id="main">
      <h1>Single sign-on</h1>
      {error ? (
        <>
          <p className="form-error" role="alert">{humanMessage(error)}</p>
          <p><Link to="/login">Back to sign in</Link></p>
        </>
      ) : <p role="status">Signing you in…</p>}
    </main>
  );
}
