/**
 * One long-lived Ceph client in cephd's own process: librados and librbd (Debian's `librados2`,
 * `librbd1`) called through koffi, for the two things fence recovery waits on — the RBD locks of a
 * dead node's images and marking its OSDs down. The `rbd` and `ceph` tools do the same, but each is
 * a new process that starts, connects to the monitors and fetches the maps first: 0.3–0.7 s per
 * command on a loaded 2-core host, two per image, against a few milliseconds per call here.
 *
 * Every call runs on koffi's worker threads (`.async`), never on the event loop. A call can block
 * inside librados (a PG whose primary OSD died and is not yet marked down): the client's op
 * timeouts bound it (`rados_osd_op_timeout`, `rados_mon_op_timeout`, `client_mount_timeout`), so
 * a call fails with ETIMEDOUT rather than hanging. librados' own log lines are kept off cephd's
 * stderr (`log_to_stderr`, `err_to_stderr` false).
 *
 * The cluster is found as the tools find it: `CEPH_CONF` or `/etc/ceph/ceph.conf`, and `CEPH_ARGS`.
 * Connected at cephd's start (or at first use), kept; a failed connect or an
 * `ESHUTDOWN`/`ENOTCONN` failure drops it and the next call connects again.
 */
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import type Koffi from 'koffi';
import { PvcError } from '@pvc/runtime';
import type { RbdLock } from '../lock-list.js';

type Native = ReturnType<typeof bind>;
type Ptr = bigint;

/** A librados/librbd call failed: the function, the image or command, and the errno's name. */
export class RadosError extends PvcError {
  constructor(
    readonly call: string,
    readonly errno: number,
    what: string,
  ) {
    super('RADOS_CALL_FAILED', `${call}${what ? ` ${what}` : ''}: ${errnoText(call, errno)}`, { retryable: errno === ETIMEDOUT });
  }
}

const { ETIMEDOUT, ERANGE, ENOTCONN } = constants.errno;
/** Linux's ESHUTDOWN, which Node's table lacks. */
const ESHUTDOWN = 108;
/** errno → its name (`ENOENT`), from Node's own table (the first name of an alias pair). */
const ERRNO_NAMES = new Map<number, string>([[ESHUTDOWN, 'ESHUTDOWN']]);
for (const [name, n] of Object.entries(constants.errno)) if (!ERRNO_NAMES.has(n)) ERRNO_NAMES.set(n, name);
/** What an errno means from a call, where the name alone does not say it. */
const MEANS: Record<string, string> = {
  'rbd_open 2': 'no such image',
  'rados_ioctx_create 2': 'no such pool',
  'rados_connect 2': 'no monitor address in the Ceph config (mon_host)',
  'rados_conf_read_file 2': 'no such file',
};
const errnoText = (call: string, errno: number): string => {
  const meaning = errno === ETIMEDOUT ? 'Ceph did not answer in time' : MEANS[`${call} ${errno}`];
  return `(${errno}) ${ERRNO_NAMES.get(errno) ?? 'error'}${meaning ? ` (${meaning})` : ''}`;
};

/** Client timeouts, seconds: every blocking librados call returns by then. */
export interface RadosTimeouts {
  osdOpS: number;
  monOpS: number;
  mountS: number;
}

export const DEFAULT_RADOS_TIMEOUTS: RadosTimeouts = Object.freeze({ osdOpS: 10, monOpS: 10, mountS: 10 });

/** The port: what cephd needs of a Ceph client. */
export interface RadosClient {
  /** Connects now (every call connects if needed): cephd warms the client at start, so fence recovery does not pay for it. */
  connect(): Promise<void>;
  /** The locks on `pool/image` (`rbd lock list`). */
  listLocks(image: string): Promise<RbdLock[]>;
  /** Breaks one lock (`rbd lock remove`; Ceph blocklists the holder, `rbd_blocklist_on_break_lock`). */
  breakLock(image: string, lock: RbdLock): Promise<void>;
  /**
   * Fetches the cluster's latest OSD map (`rados_wait_for_latest_osdmap`). A long-lived client
   * otherwise keeps the map it had: its ops to an OSD that died since wait there until its
   * objecter times them out (`objecter_timeout`, 10 s by default) before it asks for a new one.
   */
  latestOsdMap(): Promise<void>;
  /** A monitor command (JSON, as `ceph` sends it); its output buffer as text. */
  monCommand(cmd: Record<string, unknown>): Promise<string>;
  /** A manager command (`osd df`, `osd status` in Pacific); its output buffer as text. */
  mgrCommand(cmd: Record<string, unknown>): Promise<string>;
  /** Disconnects. */
  close(): void;
}

function bind(koffi: typeof Koffi) {
  const rados = koffi.load('librados.so.2');
  const rbd = koffi.load('librbd.so.1');
  // Handles are opaque pointers (BigInt in koffi 3).
  return {
    koffi,
    create: rados.func('int rados_create(_Out_ void **cluster, const char *id)'),
    confReadFile: rados.func('int rados_conf_read_file(void *cluster, const char *path)'),
    confParseEnv: rados.func('int rados_conf_parse_env(void *cluster, const char *var)'),
    confSet: rados.func('int rados_conf_set(void *cluster, const char *option, const char *value)'),
    connect: rados.func('int rados_connect(void *cluster)'),
    shutdown: rados.func('void rados_shutdown(void *cluster)'),
    ioctxCreate: rados.func('int rados_ioctx_create(void *cluster, const char *pool, _Out_ void **ioctx)'),
    ioctxDestroy: rados.func('void rados_ioctx_destroy(void *ioctx)'),
    monCommand: rados.func('int rados_mon_command(void *cluster, const char **cmd, size_t cmdlen, const char *inbuf, size_t inbuflen, _Out_ void **outbuf, _Out_ size_t *outbuflen, _Out_ void **outs, _Out_ size_t *outslen)'),
    waitForLatestOsdmap: rados.func('int rados_wait_for_latest_osdmap(void *cluster)'),
    mgrCommand: rados.func('int rados_mgr_command(void *cluster, const char **cmd, size_t cmdlen, const char *inbuf, size_t inbuflen, _Out_ void **outbuf, _Out_ size_t *outbuflen, _Out_ void **outs, _Out_ size_t *outslen)'),
    bufferFree: rados.func('void rados_buffer_free(void *buf)'),
    open: rbd.func('int rbd_open(void *ioctx, const char *name, _Out_ void **image, const char *snap)'),
    close: rbd.func('int rbd_close(void *image)'),
    listLockers: rbd.func('int64_t rbd_list_lockers(void *image, _Out_ int *exclusive, _Out_ uint8_t *tag, _Inout_ size_t *tag_len, _Out_ uint8_t *clients, _Inout_ size_t *clients_len, _Out_ uint8_t *cookies, _Inout_ size_t *cookies_len, _Out_ uint8_t *addrs, _Inout_ size_t *addrs_len)'),
    breakLock: rbd.func('int rbd_break_lock(void *image, const char *client, const char *cookie)'),
  };
}

/** Runs a koffi function on a worker thread. */
function call<T>(fn: { async: (...args: unknown[]) => void }, ...args: unknown[]): Promise<T> {
  return new Promise<T>((resolve, reject) => fn.async(...args, (err: unknown, r: T) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(r))));
}

/** NUL-separated strings of a buffer's first `len` bytes. */
function cstrings(buf: Buffer, len: number): string[] {
  return buf.subarray(0, len).toString('utf8').split('\0').filter((s) => s !== '');
}

let loaded: Native | Error | undefined;

/** koffi and the two libraries, loaded once; the reason when they cannot be. */
export function loadNative(): Native | Error {
  if (loaded) return loaded;
  try {
    const require = createRequire(import.meta.url);
    loaded = bind(require('koffi') as typeof Koffi);
  } catch (err) {
    loaded = err instanceof Error ? err : new Error(String(err));
  }
  return loaded;
}

/** The real client over librados/librbd. Throws (with the loader's reason) when they cannot be loaded. */
export function createLibRados(opts: { timeouts?: RadosTimeouts; env?: NodeJS.ProcessEnv } = {}): RadosClient {
  const native = loadNative();
  if (native instanceof Error) throw new PvcError('RADOS_UNAVAILABLE', `librados/librbd not loadable through koffi: ${native.message}`, { retryable: false });
  return new LibRados(native, opts.timeouts ?? DEFAULT_RADOS_TIMEOUTS, opts.env ?? process.env);
}

class LibRados implements RadosClient {
  private cluster: Promise<Ptr> | undefined;
  private readonly pools = new Map<string, Promise<Ptr>>();

  constructor(
    private readonly n: Native,
    private readonly timeouts: RadosTimeouts,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  async connect(): Promise<void> {
    await this.connected();
  }

  async listLocks(image: string): Promise<RbdLock[]> {
    return this.withImage(image, async (img) => {
      let sizes = [64, 1024, 1024, 1024];
      for (let attempt = 0; attempt < 3; attempt++) {
        const [tag, clients, cookies, addrs] = sizes.map((s) => Buffer.alloc(s));
        const lens = sizes.map((s) => [s]);
        const exclusive = [0];
        const r = Number(await call<bigint | number>(this.n.listLockers, img, exclusive, tag, lens[0], clients, lens[1], cookies, lens[2], addrs, lens[3]));
        if (r === -ERANGE) {
          sizes = lens.map((l, i) => Math.max(l[0] ?? 0, (sizes[i] ?? 0) * 2));
          continue;
        }
        if (r < 0) throw new RadosError('rbd_list_lockers', -r, image);
        const c = cstrings(clients!, lens[1]![0]!);
        const k = cstrings(cookies!, lens[2]![0]!);
        const a = cstrings(addrs!, lens[3]![0]!);
        return c.slice(0, r).map((locker, i) => ({ id: k[i] ?? '', locker, address: a[i] ?? '' }));
      }
      throw new RadosError('rbd_list_lockers', ERANGE, image);
    });
  }

  async breakLock(image: string, lock: RbdLock): Promise<void> {
    await this.withImage(image, async (img) => {
      const r = await call<number>(this.n.breakLock, img, lock.locker, lock.id);
      if (r < 0) throw new RadosError('rbd_break_lock', -r, `${image} ${lock.locker} "${lock.id}"`);
    });
  }

  async latestOsdMap(): Promise<void> {
    const cluster = await this.connected();
    const r = await this.checked(call<number>(this.n.waitForLatestOsdmap, cluster));
    if (r < 0) throw new RadosError('rados_wait_for_latest_osdmap', -r, '');
  }

  monCommand(cmd: Record<string, unknown>): Promise<string> {
    return this.command('rados_mon_command', this.n.monCommand, cmd);
  }

  mgrCommand(cmd: Record<string, unknown>): Promise<string> {
    return this.command('rados_mgr_command', this.n.mgrCommand, cmd);
  }

  private async command(name: string, fn: Native['monCommand'], cmd: Record<string, unknown>): Promise<string> {
    const cluster = await this.connected();
    const outbuf: [Ptr | null] = [null];
    const outlen: [number] = [0];
    const outs: [Ptr | null] = [null];
    const outslen: [number] = [0];
    const text = JSON.stringify(cmd);
    const r = await this.checked(call<number>(fn, cluster, [text], 1, null, 0, outbuf, outlen, outs, outslen));
    const take = (p: Ptr | null, len: number): string => {
      if (p === null || p === 0n) return '';
      const s = len > 0 ? (this.n.koffi.decode(p, 'char', len) as string) : '';
      this.n.bufferFree(p);
      return s;
    };
    const out = take(outbuf[0], Number(outlen[0]));
    const status = take(outs[0], Number(outslen[0]));
    if (r < 0) throw new RadosError(name, -r, `${String(cmd.prefix ?? text)}${status ? ` (${status.trim()})` : ''}`);
    return out;
  }

  close(): void {
    const cluster = this.cluster;
    this.cluster = undefined;
    const pools = [...this.pools.values()];
    this.pools.clear();
    void cluster?.then(async (c) => {
      for (const p of pools) await p.then((io) => this.n.ioctxDestroy(io), () => undefined);
      this.n.shutdown(c);
    }, () => undefined);
  }

  private async withImage<T>(image: string, fn: (img: Ptr) => Promise<T>): Promise<T> {
    const slash = image.indexOf('/');
    const pool = image.slice(0, slash);
    const name = image.slice(slash + 1);
    const io = await this.ioctx(pool);
    const out: [Ptr | null] = [null];
    const r = await this.checked(call<number>(this.n.open, io, name, out, null));
    if (r < 0 || out[0] === null) throw new RadosError('rbd_open', -r, image);
    const img = out[0];
    try {
      return await fn(img);
    } finally {
      await call<number>(this.n.close, img);
    }
  }

  private ioctx(pool: string): Promise<Ptr> {
    let io = this.pools.get(pool);
    if (!io) {
      io = this.connected().then(async (cluster) => {
        const out: [Ptr | null] = [null];
        const r = await call<number>(this.n.ioctxCreate, cluster, pool, out);
        if (r < 0 || out[0] === null) throw new RadosError('rados_ioctx_create', -r, pool);
        return out[0];
      });
      io.catch(() => this.pools.delete(pool));
      this.pools.set(pool, io);
    }
    return io;
  }

  private connected(): Promise<Ptr> {
    if (!this.cluster) {
      this.cluster = this.openCluster();
      this.cluster.catch(() => (this.cluster = undefined));
    }
    return this.cluster;
  }

  private async openCluster(): Promise<Ptr> {
    const out: [Ptr | null] = [null];
    let r = this.n.create(out, null) as number;
    if (r < 0 || out[0] === null) throw new RadosError('rados_create', -r, '');
    const cluster = out[0];
    const set = (pairs: [string, string][]): void => {
      for (const [k, v] of pairs) {
        const e = this.n.confSet(cluster, k, v) as number;
        if (e < 0) throw new RadosError('rados_conf_set', -e, k);
      }
    };
    try {
      set([['log_to_stderr', 'false'], ['err_to_stderr', 'false']]);
      r = this.n.confReadFile(cluster, this.env['CEPH_CONF'] ?? null) as number;
      if (r < 0) throw new RadosError('rados_conf_read_file', -r, this.env['CEPH_CONF'] ?? '/etc/ceph/ceph.conf');
      r = this.n.confParseEnv(cluster, null) as number;
      if (r < 0) throw new RadosError('rados_conf_parse_env', -r, 'CEPH_ARGS');
      set([
        ['log_to_stderr', 'false'], ['err_to_stderr', 'false'],
        ['rados_osd_op_timeout', String(this.timeouts.osdOpS)], ['rados_mon_op_timeout', String(this.timeouts.monOpS)],
        ['client_mount_timeout', String(this.timeouts.mountS)],
      ]);
      r = await call<number>(this.n.connect, cluster);
      if (r < 0) throw new RadosError('rados_connect', -r, '');
      return cluster;
    } catch (err) {
      this.n.shutdown(cluster);
      throw err;
    }
  }

  /** A call's result; a lost connection (ESHUTDOWN, ENOTCONN) is dropped so the next call connects again. */
  private async checked(p: Promise<number>): Promise<number> {
    const r = await p;
    if (r === -ESHUTDOWN || r === -ENOTCONN) this.close();
    return r;
  }
}
