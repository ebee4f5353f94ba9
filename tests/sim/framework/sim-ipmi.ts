import type { Clock } from '@pvc/runtime';
import { IpmiError, type Ipmi, type IpmiCallOptions, type IpmiTarget, type PowerState } from '@pvc/ipmi';

/** What the simulated BMCs act on. */
export interface BmcHost {
  readonly powered: boolean;
  ipmiReachable: boolean;
  /** The BMC answers but refuses our credentials (IPMI_AUTH, at once). */
  ipmiRefusing: boolean;
  /** Extra latency of every call to this BMC, ms. */
  ipmiLatencyMs: number;
  powerOff(why: string): void;
  powerOn(why: string): void;
}

/**
 * The simulator's IPMI: one BMC per node, addressed as `<node>-lom`, acting on the simulated
 * node's power. An unreachable BMC waits the call's timeout and fails IPMI_UNREACHABLE.
 */
export class SimIpmi implements Ipmi {
  constructor(
    private readonly clock: Clock,
    private readonly hosts: (bmc: string) => BmcHost | undefined,
    private readonly baseLatencyMs = 150,
  ) {}

  private async enter(target: IpmiTarget, op: 'power status' | 'power off' | 'power on', opts?: IpmiCallOptions): Promise<BmcHost> {
    const host = this.hosts(target.host);
    const timeoutMs = opts?.timeoutMs ?? 5_000;
    if (!host?.ipmiReachable) {
      await this.clock.sleep(timeoutMs, opts?.signal);
      throw new IpmiError('IPMI_UNREACHABLE', target.host, op, `no answer within ${timeoutMs} ms`);
    }
    await this.clock.sleep(Math.min(timeoutMs, this.baseLatencyMs + host.ipmiLatencyMs), opts?.signal);
    if (host.ipmiRefusing) throw new IpmiError('IPMI_AUTH', target.host, op, 'the BMC refused the credentials');
    return host;
  }

  async powerStatus(target: IpmiTarget, opts?: IpmiCallOptions): Promise<PowerState> {
    return (await this.enter(target, 'power status', opts)).powered ? 'on' : 'off';
  }

  async powerOff(target: IpmiTarget, opts?: IpmiCallOptions): Promise<void> {
    (await this.enter(target, 'power off', opts)).powerOff('ipmi power off');
  }

  async powerOn(target: IpmiTarget, opts?: IpmiCallOptions): Promise<void> {
    (await this.enter(target, 'power on', opts)).powerOn('ipmi power on');
  }
}
