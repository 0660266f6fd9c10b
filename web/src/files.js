import { ApiError } from './api.js';

/**
 * Files to and from the API with the Bearer token. A download (the call-record CSV export): a plain link
 * cannot send the header, so the file is fetched with it and handed to the browser as a blob
 * download, named as the server's Content-Disposition says. An upload (contacts CSV): text/csv, not JSON.
 */

/** The file name of a Content-Disposition header, or `fallback`. */
export function attachmentName(disposition, fallback) {
  const match = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition || '');
  return match ? decodeURIComponent(match[1]) : fallback;
}

/** The query string of `query`, without empty values. */
export function queryString(query) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(key, value);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** GET `path` with the token and save the answer as a file; rejects with ApiError. */
export async function downloadWithToken(path, { token, query = {}, fallbackName }) {
  let response;
  try {
    response = await fetch(path + queryString(query), { headers: { Authorization: `Bearer ${token}` } });
  } catch {
    throw new ApiError(0, 'network_error', 'The server could not be reached.');
  }
  if (!response.ok) {
    let data = null;
    try { data = await response.json(); } catch { data = null; }
    throw new ApiError(response.status, data?.code || (response.status >= 500 ? 'internal_error' : 'http_error'),
      data?.message || `The server answered ${response.status}.`, data?.details);
  }
  const blob = await response.blob();
  const name = attachmentName(response.headers.get('content-disposition'), fallbackName);
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
  return name;
}

/** POST a CSV file's text as `text/csv` with the token; the parsed JSON answer, or ApiError. */
export async function uploadCsv(path, { token, text }) {
  let response;
  try {
    response = await fetch(path, { method: 'POST', body: text,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/csv', Accept: 'application/json' } });
  } catch {
    throw new ApiError(0, 'network_error', 'The server could not be reached.');
  }
  let data = null;
  try { data = await response.json(); } catch { data = null; }
  if (!response.ok) {
    throw new ApiError(response.status, data?.code || (response.status >= 500 ? 'internal_error' : 'http_error'),
      data?.message || `The server answered ${response.status}.`, data?.details);
  }
  return data;
}
