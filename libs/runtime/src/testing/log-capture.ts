import { createLogger, type Logger } from '../logger.js';

/** A debug-level logger whose JSON lines are kept, parsed, in `lines` (no dates). For tests. */
export function captureLogger(service = 'test', node = 'hv1'): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) };
  return { logger: createLogger({ service, node, debug: true, dates: false, destination }), lines };
}
