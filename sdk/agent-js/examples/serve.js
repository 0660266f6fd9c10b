#!/usr/bin/env node
/**
 * Serves the example softphone with no build step of yours: the page, and `/sdk.js` (the SDK
 * and JsSIP bundled in memory by esbuild at start-up). Requests for `/auth/*` and `/api/*`,
 * the agent channel's WebSocket included, are passed to the API with the browser's Host
 * header, so the page, the REST API and the channel share one origin (the API sends no CORS
 * headers) and the tenant is the host name you open, as in production.
 *
 *   node examples/serve.js --api http://127.0.0.1:8080 --port 8090
 *   → open http://<tenant>.localhost:8090/
 */
import http from 'node:http';
import net from 'node:net';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const STATIC = { '/': 'index.html', '/index.html': 'index.html', '/softphone.js': 'softphone.js' };
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : (process.env[`SDK_EXAMPLE_${name.toUpperCase()}`] || fallback);
}

/** The SDK bundled for the browser (ES module), once. */
export async function bundle() {
  const result = await esbuild.build({
    entryPoints: [path.join(HERE, '../src/index.js')], bundle: true, format: 'esm', platform: 'browser',
    target: 'es2020', write: false, minify: false, sourcemap: 'inline', logLevel: 'silent',
  });
  return result.outputFiles[0].contents;
}

/** Start the example server; resolves with the http.Server once listening. */
export async function serve({ api, port = 8090, host = '127.0.0.1' }) {
  const target = new URL(api);
  const sdk = await bundle();
  const proxied = (url) => url.startsWith('/auth/') || url.startsWith('/api/');
  const server = http.createServer(async (req, res) => {
    const url = req.url.split('?')[0];
    if (proxied(url)) {
      const upstream = http.request({
        host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers,
      }, (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => { res.writeHead(502, { 'Content-Type': 'application/json' }); res.end('{"code":"api_unreachable","message":"The API is not reachable."}'); });
      req.pipe(upstream);
      return;
    }
    if (url === '/sdk.js') {
      res.writeHead(200, { 'Content-Type': TYPES['.js'], 'Cache-Control': 'no-store' });
      res.end(sdk);
      return;
    }
    const file = STATIC[url];
    if (!file) { res.writeHead(404); res.end('not found'); return; }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)], 'Cache-Control': 'no-store' });
    res.end(await readFile(path.join(HERE, file)));
  });
  // WebSocket upgrades (the agent channel): replay the request head, then splice the sockets
  server.on('upgrade', (req, socket, head) => {
    if (!proxied(req.url)) { socket.destroy(); return; }
    const upstream = net.connect(Number(target.port || 80), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(lines.join('\r\n') + '\r\n\r\n');
      if (head && head.length) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    const close = () => { upstream.destroy(); socket.destroy(); };
    upstream.on('error', close);
    socket.on('error', close);
    upstream.on('close', close);
    socket.on('close', close);
  });
  await new Promise((resolve) => server.listen(Number(port), host, resolve));
  return server;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const api = option('api', 'http://127.0.0.1:8080');
  const port = Number(option('port', '8090'));
  const server = await serve({ api, port, host: option('host', '127.0.0.1') });
  const { port: bound } = server.address();
  console.log(`example softphone on http://<tenant>.localhost:${bound}/ (API ${api}); Ctrl-C stops it`);
}
