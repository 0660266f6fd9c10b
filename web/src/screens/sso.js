import { safeNext } from '../session.js';

/** The console page the identity provider sends the browser back to (under /console). */
export const SSO_RETURN_PATH = '/console/login/sso';
const NEXT_KEY = 'console:sso-next';

/**
 * Leave for the identity provider: the API's start URL answers 302 to it, with this console's
 * callback page as the redirect. The page to come back to is kept for the callback page
 * (sessionStorage: this tab only; never the token).
 */
export function startSso(startUrl, next) {
  sessionStorage.setItem(NEXT_KEY, safeNext(next));
  const url = new URL(startUrl, window.location.origin);
  url.searchParams.set('redirect_path', SSO_RETURN_PATH);
  window.location.assign(url.pathname + url.search);
}

/** The page kept by startSso (once), inside the console only. */
export function takeSsoNext() {
  const next = sessionStorage.getItem(NEXT_KEY);
  sessionStorage.removeItem(NEXT_KEY);
  return safeNext(next);
}
