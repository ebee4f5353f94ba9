import { randomBytes } from 'node:crypto';
import type { Clock } from '@pvc/runtime';
import { withDeadline } from '../core/deadline.js';
import type { ZkClient } from '../types.js';

/** What the contract suite needs from one ZkClient implementation. */
export interface ZkContractHarness {
  readonly clock: Clock;
  /** Connects a new client with its own session, waiting for the session. */
  connect(opts?: { sessionTimeoutMs?: number }): Promise<ZkClient>;
  /** Makes the server expire the client's current session now. */
  expireSession(client: ZkClient): Promise<void>;
  /** Releases the harness (servers, clients). */
  close(): Promise<void>;
}

/** Per-suite state shared by the contract test files: a fresh root path per test, tracked clients. */
export class ContractContext {
  private harness: ZkContractHarness | undefined;
  private admin: ZkClient | undefined;
  private clients: ZkClient[] = [];
  private base = '';
  private n = 0;
  root = '';

  constructor(private readonly make: () => Promise<ZkContractHarness>) {}

  get h(): ZkContractHarness {
    if (!this.harness) throw new Error('contract harness not started');
    return this.harness;
  }

  get clock(): Clock {
    return this.h.clock;
  }

  async start(): Promise<void> {
    this.harness = await this.make();
    this.admin = await this.harness.connect();
    this.base = `/contract-${randomBytes(4).toString('hex')}`;
    await this.admin.ensurePath(this.base);
  }

  async stop(): Promise<void> {
    await this.admin?.delete(this.base, { missingOk: true });
    await this.admin?.close();
    await this.harness?.close();
  }

  async beforeEach(): Promise<void> {
    this.root = `${this.base}/t${++this.n}`;
    await this.admin?.create(this.root);
  }

  async afterEach(): Promise<void> {
    const cs = this.clients;
    this.clients = [];
    await Promise.all(cs.map((c) => c.close()));
  }

  /** A new client for this test, closed after it. */
  async client(opts?: { sessionTimeoutMs?: number }): Promise<ZkClient> {
    const c = await this.h.connect(opts);
    this.clients.push(c);
    return c;
  }

  /** Absolute path of `rel` under this test's root. */
  p(rel: string): string {
    return `${this.root}/${rel}`;
  }

  /** Polls `check` until it returns true (every 20 ms, deadline `timeoutMs`). */
  async eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
    const clock = this.clock;
    const stop = new AbortController();
    try {
      await withDeadline(`waiting until ${what}`, clock, async () => {
        while (!(await check())) await clock.sleep(20, stop.signal);
      }, { timeoutMs });
    } finally {
      stop.abort();
    }
  }

  /** Resolves on the client's next event of that kind. */
  next<E extends 'connected' | 'suspended' | 'expired'>(client: ZkClient, event: E, timeoutMs = 10_000): Promise<void> {
    let off: () => void = () => undefined;
    const p = new Promise<void>((resolve) => {
      off = client.on(event, () => resolve());
    });
    return withDeadline(`waiting for ${event}`, this.clock, () => p, { timeoutMs }).finally(off);
  }
}
