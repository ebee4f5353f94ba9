import type { Exec } from '@pvc/runtime';
import { xmlAttr as attr } from '../domain-xml.js';
import { VmdError } from '../errors.js';

/**
 * Reads a running domain's live XML (`virsh dumpxml`): the console log path and VNC address are
 * only known there (libvirt fills in autoport). Real: {@link virshLiveXml}; tests pass a function.
 */
export type LiveXmlReader = (uuid: string) => Promise<string>;

/** The live-XML reader over `virsh -c <uri> dumpxml <uuid>` (the Exec port). */
export function virshLiveXml(exec: Exec, uri: string): LiveXmlReader {
  return async (uuid) => {
    const r = await exec.run('virsh', ['-c', uri, 'dumpxml', uuid], { timeoutMs: 30_000 });
    if (r.exitCode !== 0) throw new VmdError('LIBVIRT_ERROR', `virsh dumpxml ${uuid}: ${r.stderr.trim() || `exit ${r.exitCode}`}`);
    return r.stdout;
  };
}

/** The `<serial>` and `<console>` elements of a domain XML, serials first. */
function consoleElements(xml: string): string[] {
  const serials = [...xml.matchAll(/<serial\b[\s\S]*?<\/serial>/g)].map((m) => m[0]);
  const consoles = [...xml.matchAll(/<console\b[\s\S]*?<\/console>/g)].map((m) => m[0]);
  return [...serials, ...consoles];
}

/**
 * The file a domain's serial console is written to: a `<log file=…>` of a serial/console element,
 * else the `<source path=…>` of a `type='file'` one; undefined when the XML names none (the
 * caller then uses `<console_log_directory>/<name>.log`, the original's path).
 */
export function consoleLogPath(xml: string): string | undefined {
  for (const el of consoleElements(xml)) {
    const log = /<log\b[^>]*>/.exec(el)?.[0];
    const file = log && attr(log, 'file');
    if (file) return file;
    const open = /^<(?:serial|console)\b[^>]*>/.exec(el)?.[0] ?? '';
    if (attr(open, 'type') === 'file') {
      const src = /<source\b[^>]*>/.exec(el)?.[0];
      const path = src && attr(src, 'path');
      if (path) return path;
    }
  }
  return undefined;
}

/**
 * `"<listen>:<port>"` of the first `<graphics type='vnc'>` with a port (libvirt's live XML has the
 * autoport-assigned one; `-1` = not assigned = none), else "" — the value of the `vnc` key.
 * The listen address is the `listen` attribute or the first `<listen address=…>` child.
 */
export function vncAddress(xml: string): string {
  for (const m of xml.matchAll(/<graphics\b[^>]*?(?:\/>|>[\s\S]*?<\/graphics>)/g)) {
    const el = m[0];
    const open = /^<graphics\b[^>]*>/.exec(el)?.[0] ?? '';
    if (attr(open, 'type') !== 'vnc') continue;
    const port = attr(open, 'port');
    if (!port || !/^\d+$/.test(port)) continue;
    const listenEl = /<listen\b[^>]*>/.exec(el.slice(open.length))?.[0];
    const listen = attr(open, 'listen') ?? (listenEl && attr(listenEl, 'address')) ?? '';
    return `${listen}:${port}`;
  }
  return '';
}
