/** types/index.d.ts is the package's contract: a strict TypeScript consumer compiles against it. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

test('given a page written in strict TypeScript, then it type-checks against the shipped .d.ts', () => {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  const out = execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2020', '--module', 'nodenext',
    '--moduleResolution', 'nodenext', '--lib', 'es2020,dom', '--skipLibCheck', 'false',
    path.join(ROOT, 'test/types-consumer.ts')], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(out.trim(), '');
});
