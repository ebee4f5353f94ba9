/**
 * Builds netd from the loaded config with the real ports (sysfs, Zookeeper, nft, ip/arping, wall clock) and runs it
 * until shutdown. Called by main.ts only.
 */
import type { ServiceContext } from '@pvc/rpc';
import { createExec, realClock } from '@pvc/runtime';
import { RealZkClient } from '@pvc/zk';
import { ClientNetworkFollower, ownFacts, RESYNC_MS } from './clientnet/follower.js';
import { NetworksUpPublisher } from './clientnet/networks-up.js';
import { ClientNetworkPrimary } from './clientnet/primary.js';
import { createDnsmasqHost, defaultHookCommand, DnsmasqProcess, initLeases } from './dhcp/index.js';
import { createIpDevices } from './clientnet/ip-devices.js';
import { buildDnsAggregator } from './dns/build.js';
import { netdPrimaryDuties } from './duties.js';
import { floatingAddresses, removeLeftovers } from './floating/floating.js';
import { createIpAddresses } from './floating/ip-addresses.js';
import { createSysfsNet } from './host/sysnet.js';
import { Netd } from './netd.js';
import { metadataDuties, removeMetadataIpLeftover } from './metadata/index.js';
import { NetworkCounter } from './network-count.js';
import { Firewall } from './nft/index.js';
import { configuredDevices, NetStatsSampler } from './netstats.js';
import { PrimaryRole } from '@pvc/rpc';

/** Builds the real netd and hands it to `publish` (the gRPC handlers), then runs it. */
export async function runNetd(ctx: ServiceContext, publish: (netd: Netd) => void): Promise<void> {
  const { config, logger } = ctx;
  // Connects in the background and reconnects for ever; netd serves (with the last known network
  // count) while Zookeeper is unreachable.
  const zk = new RealZkClient({
    hosts: config.cluster.coordinators,
    port: config.database.zookeeper.port,
    clock: realClock,
    logger: logger.child({ component: 'zk' }),
  });
  ctx.zkLog.attach(zk);
  zk.on('connected', (e) => logger.info({ newSession: e.newSession }, 'Zookeeper connected'));
  zk.on('suspended', () => logger.warn('Zookeeper connection lost; the network count stays at its last value'));
  const exec = createExec(logger.child({ component: 'exec' }));
  const floating = floatingAddresses(config);
  const floatingDeps = { addresses: createIpAddresses({ exec }), logger: logger.child({ component: 'floating' }) };
  // Before the handlers are published: a SetPrimary cannot race the clean-up.
  await removeLeftovers(floating, floatingDeps);
  const metadataLog = logger.child({ component: 'metadata' });
  const metadata = metadataDuties(config, { zk, addresses: floatingDeps.addresses, clock: realClock, logger: metadataLog });
  if (metadata) await removeMetadataIpLeftover({ addresses: floatingDeps.addresses, logger: metadataLog });
  const firewall = new Firewall({
    enabled: config.functions.enable_networking,
    dynamicDirectory: config.system.configuration.directories.dynamic_directory,
    exec,
    logger: logger.child({ component: 'firewall' }),
  });
  const own = ownFacts(config);
  const dirs = config.system.configuration.directories;
  const dnsmasqHost = createDnsmasqHost();
  const primary = new ClientNetworkPrimary({
    addresses: floatingDeps.addresses,
    logger: logger.child({ component: 'client-networks' }),
    dnsmasq: (vni) => new DnsmasqProcess(vni, {
      exec, clock: realClock, logger: logger.child({ component: 'dnsmasq' }), host: dnsmasqHost,
      dirs: { dynamicDirectory: dirs.dynamic_directory, logDirectory: dirs.log_directory },
      zk: { hosts: config.cluster.coordinators, port: config.database.zookeeper.port },
      hookCommand: defaultHookCommand(),
      initLeases: () => initLeases(zk, vni),
    }),
  });
  const networksUp = new NetworksUpPublisher({ zk, node: config.node, logger: logger.child({ component: 'client-networks' }) });
  const clientNetworks = own && new ClientNetworkFollower({
    zk, devices: createIpDevices({ exec }), firewall, clock: realClock, logger: logger.child({ component: 'client-networks' }), node: config.node, own, primary, networksUp,
  });
  const netd = new Netd({
    logger,
    sampler: new NetStatsSampler({
      sysnet: createSysfsNet(),
      clock: realClock,
      logger: logger.child({ component: 'netstats' }),
      windowSamples: config.system.fencing.intervals.keepalive_interval,
      configured: configuredDevices(config.system.configuration.networking),
    }),
    networks: new NetworkCounter(zk, logger.child({ component: 'networks' })),
    role: new PrimaryRole({ service: 'netd', logger: logger.child({ component: 'primary-role' }), duties: netdPrimaryDuties(floating, floatingDeps, clientNetworks, buildDnsAggregator(config, zk, exec, logger)?.duty(), metadata) }),
    firewall,
    clientNetworks,
    clearNetworksUp: own ? undefined : (signal) => networksUp.clearUntilDone(realClock, RESYNC_MS, signal),
  });
  publish(netd);
  try {
    await netd.run(ctx.shutdown.signal);
  } finally {
    await ctx.zkLog.flush();
    await zk.close();
  }
}
