import type { ZkClient } from '@pvc/zk';

/**
 * A client whose reads are counted (`read`, `get`, `children`, `exists`): the benches' figure of
 * ZK reads per request or scrape. Every other call passes through unchanged.
 */
export function countingZk(zk: ZkClient): { zk: ZkClient; ops: { n: number } } {
  const ops = { n: 0 };
  const counted = new Set(['read', 'get', 'children', 'exists']);
  const proxy = new Proxy(zk, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      if (!counted.has(String(prop))) return v.bind(target);
      return (...args: unknown[]) => {
        ops.n += 1;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { zk: proxy, ops };
}
