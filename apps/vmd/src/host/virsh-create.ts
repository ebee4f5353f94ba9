import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeError, TimeoutError, type Exec } from '@pvc/runtime';
import { VmdError } from '../errors.js';

/** Options of {@link virshCreate}. */
export interface VirshCreateOptions {
  exec: Exec;
  uri: string;
  /** Where the XML is written for virsh (root-only, e.g. the dynamic directory); removed after. */
  scratchDir: string;
  timeoutMs: number;
}

/** libvirt messages that mean the connection, not the request, failed (retryable, no `fail`). */
const UNREACHABLE = /failed to connect to the hypervisor|Failed to connect socket|Cannot recv data|Cannot write data|End of file while reading|Connection reset|Broken pipe/i;

/**
 * `virDomainCreateXML` through `virsh create`, in a process of its own. Why not the binding: each
 * binding call holds one of libuv's pool threads for its whole length (a TCG createXML 0.3–1 s), and
 * the pool has 4 threads unless UV_THREADPOOL_SIZE is set before node starts — so a burst of starts
 * ran at most 4 at a time, and the next pass's list (also pool jobs) waited behind them (measured
 * with 10 guests at once: 2.4–2.7 s through the binding, 1.6–2.1 s as virsh processes; one guest:
 * +10–30 ms for the process). Each create gets its own connection too, so libvirtd's per-client
 * limit (max_client_requests, 5) does not queue them either.
 *
 * The XML goes through a file (mode 0600, removed at once): virsh reads a path, and a child's
 * stdin here is a socket, which `/dev/stdin` cannot open. Errors: libvirt's own message (virsh's
 * `error:` lines after its "Failed to create domain" one) as `LIBVIRT_ERROR`; connection-level
 * failures as `LIBVIRT_UNAVAILABLE` and an overrun as `LIBVIRT_TIMEOUT` (both retryable, the VM is
 * not failed for them).
 */
export async function virshCreate(xml: string, o: VirshCreateOptions): Promise<void> {
  const file = join(o.scratchDir, `vmd-create-${randomUUID()}.xml`);
  await writeFile(file, xml, { mode: 0o600 });
  try {
    const r = await o.exec.run('virsh', ['-c', o.uri, 'create', file], { timeoutMs: o.timeoutMs });
    if (r.exitCode === 0) return;
    const msg = libvirtMessage(r.stderr, r.stdout, r.exitCode);
    if (UNREACHABLE.test(msg)) throw new VmdError('LIBVIRT_UNAVAILABLE', `cannot reach libvirt at ${o.uri}: ${msg}`, { retryable: true });
    throw new VmdError('LIBVIRT_ERROR', msg);
  } catch (err) {
    if (err instanceof VmdError) throw err;
    if (err instanceof TimeoutError) {
      throw new VmdError('LIBVIRT_TIMEOUT', `libvirt create did not answer within ${o.timeoutMs} ms`, { cause: err, retryable: true });
    }
    throw new VmdError('LIBVIRT_UNAVAILABLE', `cannot run virsh create: ${describeError(err)}`, { cause: err, retryable: true });
  } finally {
    await rm(file, { force: true });
  }
}

/** libvirt's message from virsh's output, without virsh's own "Failed to create domain from …" line. */
export function libvirtMessage(stderr: string, stdout = '', exitCode = 1): string {
  const lines = (stderr.trim() || stdout.trim()).split('\n').map((l) => l.trim().replace(/^error:\s*/, '')).filter((l) => l !== '');
  const own = lines.filter((l) => !/^Failed to create domain from /.test(l));
  return (own.length > 0 ? own : lines).join('; ') || `virsh create exited ${exitCode}`;
}
