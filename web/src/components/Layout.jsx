import { Navigate, NavLink, Outlet, useLocation } from 'react-router';
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
          <NavLink to="/numbers">Phone numbers</NavLink>
          <NavLink to="/calls">Call records</NavLink>
          <NavLink to="/live">Live view</NavLink>
          <NavLink to="/queues">Queues</NavLink>
        </nav>
        <span className="who">{user?.username} · {account?.subdomain}</span>
        <button type="button" onClick={auth.logout}>Sign out</button>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
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
