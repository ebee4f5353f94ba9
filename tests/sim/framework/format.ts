import type { KeepalivedEvent } from '../../../apps/keepaliled/src/model.js';

/** One line of the deterministic event log for a keepaliled event, or undefined to leave it out. */
export function formatEvent(e: KeepalivedEvent, vmName: (id: string) => string): string | undefined {
  switch (e.kind) {
    case 'daemon-state':
      return `${e.node} daemonstate ${e.from} -> ${e.to} (${e.reason})`;
    case 'keepalive-failed':
      return e.missed === 1 ? `${e.node} keepalive failed` : undefined;
    case 'node-dead':
      return `${e.fencer} declares ${e.node} dead (silent ${(e.silentMs / 1000).toFixed(1)} s)`;
    case 'node-alive':
      return `${e.fencer} leaves ${e.node} alone (${e.reason})`;
    case 'fence-start':
      return `${e.fencer} fences ${e.node}${e.resumed ? ' (resumed)' : ''}`;
    case 'fence-result':
      return `${e.fencer} fence of ${e.node}: ${e.outcome}${e.outcome === 'failed' ? ` (${e.reason.replace(/\d+ ms/g, 'N ms')})` : ''}`;
    case 'fence-skipped':
      return `${e.fencer} recovery of ${e.node} skipped (${e.reason})`;
    case 'vm-recovered':
      return `${e.fencer} recovers ${vmName(e.vm)} from ${e.node} to ${e.target}${e.retried ? ' (placement retried)' : ''}`;
    case 'vm-stopped':
      return `${e.fencer} stops ${vmName(e.vm)} of ${e.node} (${e.reason.split(':')[0]})`;
    case 'vm-left':
      return `${e.fencer} leaves ${vmName(e.vm)} on ${e.node} (${e.reason})`;
    case 'recovery-done':
      return `${e.fencer} recovery of ${e.node} done (${e.recovered} recovered, ${e.left} left)`;
    case 'router-state':
      return `${e.node} routerstate ${e.from} -> ${e.to} (${e.reason})`;
    case 'primary-claimed':
      return `${e.node} claims primary (was ${e.previous})`;
    case 'primary-duties':
      return undefined; // the simulated services log "duties on/off" themselves
    case 'suicide':
      return `${e.node} suicide after ${(e.silentMs / 1000).toFixed(1)} s without keepalive (${e.stopped} VMs stopped)`;
    case 'suicide-watch':
      return `${e.node} suicide watch ${e.from} -> ${e.to} (${e.reason})`;
  }
}

/** `  12.345  text` */
export function stamp(ms: number, text: string): string {
  return `${(ms / 1000).toFixed(3).padStart(8)}  ${text}`;
}
