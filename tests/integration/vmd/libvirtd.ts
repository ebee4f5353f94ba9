/**
 * A private libvirtd for integration tests: its own virtlogd + libvirtd in a private mount and PID
 * namespace (`unshare --pid --fork --kill-child`), with temp directories bind-mounted over
 * /etc/libvirt, /run/libvirt, /var/lib/libvirt, /var/log/libvirt and /var/cache/libvirt, and its
 * UNIX socket in a temp directory the test reaches from the root namespace
 * (`qemu:///system?socket=…`). It shares nothing with the machine's own libvirtd or the cluster
 * harness's hosts. Guests are the harness's tiny TCG guest (tests/support/guest), diskless unless
 * given RBD disks.
 *
 * For RBD disks on the one-host Ceph (tests/integration/ceph/ceph-host.ts), `netns` runs the daemon
 * (and so its QEMUs) inside the Ceph host's network namespace — QEMU's librbd then reaches the mon at
 * 10.254.0.1 and holds its locks from that address, this node's storage address — and `cephConf`
 * is bind-mounted over /etc/ceph/ceph.conf in its mount namespace, where QEMU's librados looks by
 * default (as on a cluster node), so the guests' XML needs no `<config>` or `<host>`.
 *
 * Invariant: no test leaves a libvirtd, virtlogd or qemu behind. `destroy()` destroys every domain
 * and then kills the namespace (its PID 1 takes every process with it); a watchdog does the same
 * when the test process dies without cleaning up. Root only (namespaces, qemu:///system).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExec, createLogger, realClock } from '@pvc/runtime';
import { buildGuestImage, guestDomainXml, type BuiltGuest, type GuestDisk } from '../../support/guest/index.js';
import { findCloudKernel, missingPrerequisites } from '../../cluster/harness/prereqs.js';
import { waitUntil } from '../../support/wait.js';

const CACHE_DIR = '/var/tmp/pvc-cluster-cache';

/** What the private daemon needs: root, the libvirt and qemu binaries, the guest's kernel and busybox. */
export function missingLibvirtPrerequisites(): string[] {
  const wanted = /root privileges|libvirtd|virtlogd|virsh|qemu-system|busybox|cpio|gzip|unshare|vmlinuz|etc\/libvirt/;
  return missingPrerequisites().filter((m) => wanted.test(m));
}

const SCRIPT = `
set -eu
D="$0"
if [ -n "\${1:-}" ]; then
  mkdir -p "$D/ceph" /etc/ceph
  cp "$1" "$D/ceph/ceph.conf"
  mount --bind "$D/ceph" /etc/ceph
fi
mount --bind "$D/etc" /etc/libvirt
for p in run:/run/libvirt lib:/var/lib/libvirt log:/var/log/libvirt cache:/var/cache/libvirt; do
  mkdir -p "\${p#*:}"
  mount --bind "$D/\${p%%:*}" "\${p#*:}"
done
virtlogd -f /etc/libvirt/virtlogd.conf -p /run/libvirt/virtlogd.pid &
libvirtd -f /etc/libvirt/libvirtd.conf -p /run/libvirt/libvirtd.pid &
trap 'exit 0' TERM INT
wait
`;

/** Options of {@link LibvirtTestDaemon.start}. */
export interface LibvirtTestOptions {
  /** A network namespace to run the daemon in (default: the caller's). */
  netns?: string;
  /** A ceph.conf the daemon's QEMUs see as /etc/ceph/ceph.conf (copied at start). */
  cephConf?: string;
}

/** A running private libvirtd; see the module doc. */
export class LibvirtTestDaemon {
  private readonly exited: Promise<void>;

  private constructor(
    readonly dir: string,
    readonly guest: BuiltGuest,
    private readonly child: ChildProcess,
    private readonly watchdog: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** Builds (or reuses) the guest image, starts the daemon and waits until it answers. */
  static async start(opts: LibvirtTestOptions = {}): Promise<LibvirtTestDaemon> {
    const missing = missingLibvirtPrerequisites();
    if (missing.length > 0) throw new Error(`a private libvirtd needs: ${missing.join('; ')}`);
    const kernel = findCloudKernel();
    if (!kernel) throw new Error('no /boot/vmlinuz-*-cloud-amd64 (install linux-image-cloud-amd64)');
    const logger = createLogger({ service: 'test', node: 'test', destination: { write: () => undefined } });
    const guest = await buildGuestImage({ exec: createExec(logger), cacheDir: CACHE_DIR, kernel });
    const dir = mkdtempSync(join(tmpdir(), 'pvc-libvirtd-'));
    writeConfig(dir);
    const inNs = opts.netns === undefined ? [] : ['ip', 'netns', 'exec', opts.netns];
    const unshare = ['unshare', '--mount', '--propagation', 'private', '--pid', '--fork', '--kill-child', '--mount-proc', 'bash', '-c', SCRIPT, dir, opts.cephConf ?? ''];
    const [cmd, ...args] = [...inNs, ...unshare] as [string, ...string[]];
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'ignore'] });
    const watchdog = spawn('sh', ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -9 ${child.pid ?? 0} 2>/dev/null`], {
      stdio: 'ignore', detached: true,
    });
    watchdog.unref();
    const d = new LibvirtTestDaemon(dir, guest, child, watchdog);
    try {
      await waitUntil(() => spawnSync('virsh', ['-c', d.uri, 'version'], { encoding: 'utf8' }).status === 0, {
        what: `the private libvirtd (${d.uri}) to answer`, timeoutMs: 30_000, intervalMs: 100,
      });
    } catch (err) {
      await d.destroy();
      throw new Error(`${(err as Error).message}; libvirtd.log: ${d.log().slice(-2000)}`);
    }
    return d;
  }

  /** The connection URI (the test process reaches the socket directly). */
  get uri(): string {
    return `qemu:///system?socket=${join(this.dir, 'sock', 'libvirt-sock')}`;
  }

  /** A tiny TCG guest's XML (diskless unless given `disks`); its console goes to {@link consoleLog}. */
  guestXml(name: string, opts: { uuid: string; memoryMiB?: number; disks?: readonly GuestDisk[]; cmdline?: string }): string {
    mkdirSync(join(this.dir, 'consoles'), { recursive: true });
    return guestDomainXml({
      name, uuid: opts.uuid, memoryMiB: opts.memoryMiB ?? 96, kernel: this.guest.kernel, initrd: this.guest.initrd,
      consoleLog: this.consoleLog(name), ...(opts.disks && { disks: opts.disks }), ...(opts.cmdline !== undefined && { cmdline: opts.cmdline }),
    });
  }

  /** The console log of guest `name`. */
  consoleLog(name: string): string {
    return join(this.dir, 'consoles', `${name}.log`);
  }

  /** Names of the active domains. */
  running(): string[] {
    const r = spawnSync('virsh', ['-c', this.uri, 'list', '--name'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`virsh list failed: ${r.stderr.trim()}`);
    return r.stdout.split('\n').map((s) => s.trim()).filter((s) => s !== '').sort();
  }

  /** libvirtd's own log (for failure messages). */
  log(): string {
    const p = join(this.dir, 'log', 'libvirtd.log');
    return existsSync(p) ? readFileSync(p, 'utf8') : '';
  }

  /** Destroys every domain, kills the namespace (libvirtd, virtlogd, any qemu) and removes the directory. */
  async destroy(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      for (const name of this.running().filter(Boolean)) spawnSync('virsh', ['-c', this.uri, 'destroy', name], { encoding: 'utf8' });
      this.child.kill('SIGKILL');
      const ac = new AbortController();
      await Promise.race([this.exited, realClock.sleep(10_000, ac.signal).catch(() => undefined)]);
      ac.abort();
    }
    this.watchdog.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** libvirt configuration like the harness hosts': root guests, no cgroups, security driver or namespaces. */
function writeConfig(dir: string): void {
  for (const d of ['etc', 'run', 'lib', 'log', 'cache', 'sock']) mkdirSync(join(dir, d), { recursive: true });
  cpSync('/etc/libvirt', join(dir, 'etc'), { recursive: true });
  rmSync(join(dir, 'etc', 'qemu', 'networks', 'autostart'), { recursive: true, force: true });
  writeFileSync(join(dir, 'etc', 'libvirtd.conf'), [
    'listen_tls = 0', 'listen_tcp = 0', `unix_sock_dir = "${join(dir, 'sock')}"`, 'auth_unix_ro = "none"', 'auth_unix_rw = "none"',
    'unix_sock_group = "root"', 'unix_sock_rw_perms = "0770"', 'log_outputs = "3:file:/var/log/libvirt/libvirtd.log"', 'max_clients = 100',
    // Its own host UUID (the machine's is shared by every daemon): two of them can migrate to each other.
    `host_uuid = "${randomUUID()}"`, '',
  ].join('\n'));
  writeFileSync(join(dir, 'etc', 'qemu.conf'), [
    'user = "root"', 'group = "root"', 'dynamic_ownership = 0', 'remember_owner = 0', 'security_driver = "none"',
    'cgroup_controllers = [ ]', 'namespaces = [ ]', 'stdio_handler = "logd"', '',
  ].join('\n'));
  writeFileSync(join(dir, 'etc', 'virtlogd.conf'), 'log_outputs = "3:file:/var/log/libvirt/virtlogd.log"\n');
}
