import { Navigate, NavLink, Outlet, useLocation } from 'react-router';
import { canSee } from '../access.js';
import { ApiError } from '../api.js';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from './Banner.jsx';

/** The signed-in frame: skip link, header with the account, the screens' navigation, sign out. */
export function Layout() {
  const auth = useAuth();
  const user = auth.identity?.user;
  const account = auth.identity?.account;
  return (
    <>
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <span className="brand">SaaS-SBC console</span>
        <nav aria-label="Screens">
          {canSee(auth.identity, 'phoneNumbers') && <NavLink to="/numbers">Phone numbers</NavLink>}
          {canSee(auth.identity, 'callRecords') && <NavLink to="/calls">Call records</NavLink>}
          {canSee(auth.identity, 'apiKeys') && <NavLink to="/api-keys">API keys</NavLink>}
          {canSee(auth.identity, 'users') && <NavLink to="/users">Users</NavLink>}
          {canSee(auth.identity, 'carriers') && <NavLink to="/carriers">Carriers</NavLink>}
          {canSee(auth.identity, 'lcr') && <NavLink to="/lcr">Least-cost routing</NavLink>}
          {canSee(auth.identity, 'liveView') && <NavLink to="/live">Live view</NavLink>}
          {canSee(auth.identity, 'queues') && <NavLink to="/queues">Queues</NavLink>}
          {canSee(auth.identity, 'callbacks') && <NavLink to="/callbacks">Callbacks</NavLink>}
          {canSee(auth.identity, 'applications') && <NavLink to="/applications">Applications</NavLink>}
          {canSee(auth.identity, 'callFlows') && <NavLink to="/flows">Call flows</NavLink>}
          {canSee(auth.identity, 'campaigns') && <NavLink to="/campaigns">Campaigns</NavLink>}
        </nav>
        <span className="who">{user?.username} · {account?.subdomain}</span>
        <NavLink className="own" to="/account" end>Account</NavLink>
        <NavLink className="own" to="/account/second-factor">Second factor</NavLink>
        <button type="button" onClick={auth.logout}>Sign out</button>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}

/**
 * A screen this session is not shown (access.js): said plainly instead of a screen of refusals.
 * Only what is shown: the server refuses the requests all the same.
 */
export function RequireScreen({ screen, children }) {
  const auth = useAuth();
  if (canSee(auth.identity, screen)) return children;
  return <><h1>Not available</h1><p>Your role or your account's licenses do not include this screen.</p></>;
}

/** Screens only for a signed-in user; otherwise the login page, then back here. */
export function RequireAuth({ children }) {
  const auth = useAuth();
  const location = useLocation();
  if (!auth.token) {
    const next = location.pathname + location.search;
    return <Navigate to={`/login?next=${encodeURIComponent(next)}`} replace />;
  }
  if (auth.checking) return <p className="loading" role="status">Checking your session…</p>;
  if (!auth.identity) {
    return (
      <main id="main">
        <OutageBanner error={new ApiError(0, 'network_error', auth.notice || '')} onRetry={() => window.location.reload()} />
      </main>
    );
  }
  return children;
}
