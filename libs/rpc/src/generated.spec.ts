/**
 * Drift check: the committed generated code (`src/generated/**`) must be exactly what the .proto
 * files and the pinned generator (ts-proto, buf; package-lock.json) produce now. A .proto edited
 * without regenerating, or a generated file edited by hand, fails here with the files that differ.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withTempDir } from '@pvc/runtime';

const LIB = join(dirname(fileURLToPath(import.meta.url)), '..');
const COMMITTED = join(LIB, 'src', 'generated');
const REGENERATE = 'npm run rpc:gen';

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/** Relative paths that are missing on one side or differ byte for byte. */
function differing(a: string, b: string): string[] {
  const all = [...new Set([...files(a), ...files(b)])].sort();
  return all.filter((f) => {
    try {
      return !readFileSync(join(a, f)).equals(readFileSync(join(b, f)));
    } catch {
      return true;
    }
  });
}

test('the committed generated gRPC code matches the .proto files (no drift)', () =>
  withTempDir('pvc-rpc-gen-', async (dir) => {
    execFileSync(process.execPath, [join(LIB, 'scripts', 'generate.mjs'), dir], { stdio: ['ignore', 'ignore', 'inherit'] });
    assert.ok(files(dir).length > 0, 'the generator wrote nothing');
    const diff = differing(COMMITTED, dir);
    assert.deepEqual(
      diff,
      [],
      `libs/rpc/src/generated differs from what the .proto files generate: ${diff.join(', ')}. Regenerate with \`${REGENERATE}\` and commit the result.`,
    );
    return Promise.resolve();
  }));
