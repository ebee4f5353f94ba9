// For tests of the guest's module resolution: a throwaway modules directory.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A new temp dir with `modules.dep` holding `dep` (lines `path: deps…`) and a stub file at every
 * listed module path; the caller removes it.
 */
export function fakeModulesDir(dep: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'pvc-mods-'));
  writeFileSync(join(dir, 'modules.dep'), `${dep.join('\n')}\n`);
  for (const l of dep) {
    const f = join(dir, l.split(':')[0]!);
    mkdirSync(join(f, '..'), { recursive: true });
    writeFileSync(f, 'x');
  }
  return dir;
}
