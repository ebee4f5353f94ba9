/**
 * A small stateful Ceph behind `FakeExec`, for the storage request specs: pools, CRUSH rules,
 * images and snapshots, answering the `ceph`/`rbd` commands cephd runs with the exit codes and
 * messages a real Ceph 16 gives (taken from the one-host Ceph of the integration tier). Failures
 * beyond those are injected with `FakeExec.on(prefix, …)` (later registrations win).
 *
 * @module
 */
import type { ExecResult, FakeExec } from '@pvc/runtime';

interface FakePool {
  size: number;
  minSize: number;
  pgNum: number;
  pgpNum: number;
  apps: string[];
}

interface FakeImage {
  size: number;
  snaps: Set<string>;
}

const ok = (stdout = '', stderr = ''): ExecResult => ({ exitCode: 0, stdout, stderr });
const fail = (exitCode: number, stderr: string): ExecResult => ({ exitCode, stdout: '', stderr: `${stderr}\n` });
const GiB = 1024 ** 3;

/** The fake cluster; see the module comment. */
export class FakeCeph {
  readonly pools = new Map<string, FakePool>();
  readonly rules = new Set(['replicated_rule']);
  readonly classes = new Set(['hdd']);
  readonly images = new Map<string, FakeImage>();
  /** `ceph df` figures of every pool. */
  df = { maxAvail: 10 * GiB, bytesUsed: 0 };

  constructor(exec: FakeExec) {
    exec.on('ceph', (c) => this.answer('ceph', c.args));
    exec.on('rbd', (c) => this.answer('rbd', c.args));
  }

  /** What this Ceph answers to `<tool> <args…>` (for a spec's own responder that delays or records). */
  answer(tool: 'ceph' | 'rbd', args: readonly string[]): ExecResult {
    return tool === 'ceph' ? this.ceph(strip(args)) : this.rbd(strip(args));
  }

  /** Adds a pool as `pool add` would leave it. */
  addPool(name: string, pgs = 8): this {
    this.pools.set(name, { size: 2, minSize: 1, pgNum: pgs, pgpNum: pgs, apps: ['rbd'] });
    return this;
  }

  private ceph(a: string[]): ExecResult {
    const [w0, w1, w2, w3] = a;
    if (w0 === 'df') return ok(JSON.stringify({ pools: [...this.pools.keys()].map((name) => ({ name, stats: { max_avail: this.df.maxAvail, bytes_used: this.df.bytesUsed } })) }));
    if (w0 !== 'osd') return fail(22, `Error EINVAL: unknown command ${a.join(' ')}`);
    if (w1 === 'pool' && w2 === 'ls') return ok(JSON.stringify([...this.pools.keys()]));
    if (w1 === 'crush' && w2 === 'rule') return this.rule(a.slice(3));
    if (w1 === 'pool' && w2 === 'create') return this.poolCreate(a.slice(3));
    if (w1 === 'pool' && w2 === 'set') return this.poolSet(a[3] ?? '', a[4] ?? '', Number(a[5]));
    if (w1 === 'pool' && w2 === 'application') return this.withPool(a[4] ?? '', (p) => (p.apps.push(a[5] ?? ''), ok('', `enabled application '${a[5]}' on pool '${a[4]}'`)));
    if (w1 === 'pool' && w2 === 'rm') {
      this.pools.delete(w3 ?? '');
      for (const img of [...this.images.keys()]) if (img.startsWith(`${w3}/`)) this.images.delete(img);
      return ok('', `pool '${w3}' removed`);
    }
    return fail(22, `Error EINVAL: unknown command ${a.join(' ')}`);
  }

  private rule(a: string[]): ExecResult {
    if (a[0] === 'ls') return ok(JSON.stringify([...this.rules]));
    if (a[0] === 'rm') return (this.rules.delete(a[1] ?? ''), ok());
    const [, name = '', , , cls = ''] = a;
    if (!this.classes.has(cls)) return fail(22, `Error EINVAL: device class ${cls} does not exist`);
    this.rules.add(name);
    return ok();
  }

  private poolCreate([name = '', pgs = '', , rule = 'replicated_rule']: string[]): ExecResult {
    if (this.pools.has(name)) return ok('', `pool '${name}' already exists`);
    if (!this.rules.has(rule)) return fail(2, `Error ENOENT: specified rule ${rule} doesn't exist`);
    this.pools.set(name, { size: 1, minSize: 1, pgNum: Number(pgs), pgpNum: Number(pgs), apps: [] });
    return ok('', `pool '${name}' created`);
  }

  private poolSet(name: string, key: string, n: number): ExecResult {
    return this.withPool(name, (p) => {
      if (key === 'size' && (n < 1 || n > 10)) return fail(22, 'Error EINVAL: pool size must be between 1 and 10');
      if (key === 'size' && n === 1) return fail(1, 'Error EPERM: configuring pool size as 1 is disabled by default.');
      if (key === 'min_size' && (n < 1 || n > p.size)) return fail(22, `Error EINVAL: pool min_size must be between 1 and size, which is set to ${p.size}`);
      if (key === 'size') p.size = n;
      else if (key === 'min_size') p.minSize = n;
      else if (key === 'pg_num') p.pgNum = n;
      else if (key === 'pgp_num') p.pgpNum = n;
      return ok('', `set pool 5 ${key} to ${n}`);
    });
  }

  private withPool(name: string, f: (p: FakePool) => ExecResult): ExecResult {
    const p = this.pools.get(name);
    return p ? f(p) : fail(2, `Error ENOENT: unrecognized pool '${name}'`);
  }

  private rbd(a: string[]): ExecResult {
    const [w0, w1] = a;
    if (w0 === 'snap') return this.snap(w1 ?? '', a[2] ?? '');
    if (w0 === 'create') return this.create(a[3] ?? '', Number((a[2] ?? '').replace(/B$/, '')));
    if (w0 === 'info') return this.info(w1 ?? '');
    if (w0 === 'rm') return this.rm(w1 ?? '');
    if (w0 === 'resize') return this.resize(a.at(-1) ?? '', Number((a.at(-2) ?? '').replace(/B$/, '')), a.includes('--allow-shrink'));
    if (w0 === 'rename' || w0 === 'copy') return this.move(w0, w1 ?? '', a[2] ?? '');
    return fail(22, `rbd: unknown command ${a.join(' ')}`);
  }

  private create(img: string, size: number): ExecResult {
    const [pool = '', name = ''] = img.split('/');
    if (!this.pools.has(pool)) return fail(2, `rbd: error opening pool '${pool}': (2) No such file or directory`);
    if (name.includes('@')) return fail(22, "rbd: snapshot name specified for a command that doesn't use it");
    if (name.length > 100) return fail(36, `rbd: create error: (36) File name too long\n2026-11-26T17:09:24.208+0000 7f1d librbd: Could not tell if ${name} already exists`);
    if (this.images.has(img)) return fail(17, 'rbd: create error: (17) File exists');
    this.images.set(img, { size, snaps: new Set() });
    return ok();
  }

  private image(img: string, f: (i: FakeImage, name: string) => ExecResult): ExecResult {
    const i = this.images.get(img);
    const name = img.split('/')[1] ?? '';
    return i ? f(i, name) : fail(2, `rbd: error opening image ${name}: (2) No such file or directory`);
  }

  private info(spec: string): ExecResult {
    const [img = '', snap] = spec.split('@');
    return this.image(img, (i, name) => {
      if (snap !== undefined && !i.snaps.has(snap)) return fail(2, `rbd: error setting snapshot context: (2) No such file or directory`);
      const info = { name, size: i.size, objects: Math.ceil(i.size / 4194304), order: 22, snapshot_count: i.snaps.size, format: 2, ...(snap ? { protected: 'false' } : {}) };
      return ok(`${JSON.stringify(info)}\n`);
    });
  }

  private rm(img: string): ExecResult {
    return this.image(img, (i) => {
      if (i.snaps.size > 0) return fail(39, "rbd: image has snapshots - these must be deleted with 'rbd snap purge' before the image can be removed.");
      this.images.delete(img);
      return ok('', 'Removing image: 100% complete...done.');
    });
  }

  private resize(img: string, size: number, shrink: boolean): ExecResult {
    return this.image(img, (i) => {
      if (size < i.size && !shrink) return fail(22, 'rbd: shrinking an image is only allowed with the --allow-shrink flag');
      i.size = size;
      return ok('', 'Resizing image: 100% complete...done.');
    });
  }

  private move(how: 'rename' | 'copy', from: string, to: string): ExecResult {
    return this.image(from, (i) => {
      if (this.images.has(to)) return fail(17, `rbd: ${how} error: (17) File exists`);
      this.images.set(to, how === 'copy' ? { size: i.size, snaps: new Set() } : i);
      if (how === 'rename') this.images.delete(from);
      return ok();
    });
  }

  private snap(verb: string, spec: string): ExecResult {
    const [img = '', snap = ''] = spec.split('@');
    return this.image(img, (i) => {
      if (verb === 'purge') return (i.snaps.clear(), ok());
      if (verb === 'create') return i.snaps.has(snap) ? fail(17, 'rbd: failed to create snapshot: (17) File exists') : (i.snaps.add(snap), ok());
      if (!i.snaps.has(snap)) return fail(2, `rbd: failed to ${verb} snapshot: (2) No such file or directory`);
      if (verb === 'rm') i.snaps.delete(snap);
      return ok('', verb === 'rollback' ? 'Rolling back to snapshot: 100% complete...done.' : '');
    });
  }
}

/** The arguments without the trailing `--format json` that `CephCli.json` adds. */
function strip(args: readonly string[]): string[] {
  const a = [...args];
  if (a.at(-2) === '--format') a.splice(-2, 2);
  return a;
}
