#!/usr/bin/env node
/**
 * Prints the package size as shipped to a browser: src/index.js bundled and minified by esbuild
 * (pinned in package-lock.json), then gzipped (level 9) — with JsSIP and without it (the SDK's
 * own code), so both figures are on record.
 */
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function measure(external) {
  const result = await esbuild.build({
    entryPoints: [path.join(ROOT, 'src/index.js')], bundle: true, minify: true, format: 'esm',
    platform: 'browser', target: 'es2020', write: false, external, logLevel: 'silent',
  });
  const code = result.outputFiles[0].contents;
  return { minified: code.length, gzipped: gzipSync(code, { level: 9 }).length };
}

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const whole = await measure([]);
const own = await measure(['jssip']);
console.log(`esbuild ${esbuild.version}, minified + gzip -9`);
console.log(`@saas-sbc/agent-sdk with JsSIP: ${kib(whole.minified)} minified, ${kib(whole.gzipped)} gzipped`);
console.log(`@saas-sbc/agent-sdk alone (jssip external): ${kib(own.minified)} minified, ${kib(own.gzipped)} gzipped`);
