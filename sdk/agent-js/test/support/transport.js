/**
 * Node transports for the tests: `fetch` and `WebSocket` that reach `<tenant>.localhost:<port>`
 * on 127.0.0.1 (browsers resolve *.localhost to loopback themselves; node's resolver does
 * not), keeping the tenant's name in the Host header exactly as a browser sends it.
 */
import http from 'node:http';
import WebSocket from 'ws';

const lookup = (hostname, options, callback) => {
  if (typeof options === 'function') callback = options;
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    if (options && options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
    return;
  }
  callback(new Error(`tests reach only *.localhost, not ${hostname}`));
};

/** A fetch over node:http with the *.localhost lookup (enough for JSON APIs). */
export function localFetch(url, init = {}) {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: init.method || 'GET', headers: init.headers || {}, lookup }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          headers.set(name, Array.isArray(value) ? value.join(', ') : String(value));
        }
        const status = response.statusCode;
        const body = status === 204 || status === 304 ? null : Buffer.concat(chunks);
        resolve(new Response(body, { status, headers }));
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    if (init.body) request.write(init.body);
    request.end();
  });
}

/** `ws` with the *.localhost lookup; the same constructor shape as the browser's WebSocket. */
export class LocalWebSocket extends WebSocket {
  constructor(url, protocols) {
    super(url, protocols, { lookup });
  }
}
