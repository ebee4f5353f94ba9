import { Command, CommanderError } from 'commander';
import { describeError, PVC_VERSION } from '@pvc/runtime';
import { resetBadValueReports, setBadValueLogger, ZkError, ZkPathError } from '@pvc/zk';
import { CliContext } from './context.js';
import { CliError, EXIT } from './errors.js';
import type { CliIo } from './io.js';
import { lineLogger } from './problems.js';
import { registerCluster } from './commands/cluster.js';
import { registerConnection } from './commands/connection.js';
import { registerNode } from './commands/node.js';
import { registerVm } from './commands/vm.js';
import { registerNetwork } from './commands/network.js';
import { registerStorage } from './commands/storage.js';
import { registerCompletion } from './commands/completion.js';

/** Builds the whole command tree (also walked by shell completion). */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('pvc')
    .description('Manage a PVC cluster: nodes, VMs, client networks, storage and the cluster itself, through its Zookeeper')
    .version(`pvc ${PVC_VERSION}`, '--version', 'print the version')
    .helpOption('-h, --help', 'show help for this command')
    .option('-c, --connection <name>', 'a named cluster from "pvc connection list" (or PVC_CONNECTION)')
    .option('--zk <hosts>', 'Zookeeper host[:port],... (or PVC_ZK); overrides -c')
    .option('--zk-timeout <seconds>', 'give up reaching Zookeeper after this long', '10')
    .option('--no-color', 'no colours even on a terminal (NO_COLOR works too)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.io.stdout.write(s),
      writeErr: (s) => ctx.io.stderr.write(s),
      outputError: (s, write) => write(`pvc: ${s.replace(/^error: /, '').trimEnd()} (add -h for help)\n`),
    });
  program.hook('preAction', (_this, action) => {
    ctx.setFlags(action.optsWithGlobals());
  });
  registerConnection(program, ctx);
  registerCluster(program, ctx);
  registerNode(program, ctx);
  registerVm(program, ctx);
  registerNetwork(program, ctx);
  registerStorage(program, ctx);
  registerCompletion(program, ctx);
  // Every subcommand inherits the error handling and output configuration.
  return program;
}

/**
 * Runs one `pvc` invocation and returns its exit status. Never throws. A bad value in Zookeeper
 * that a command reads without showing it with its object (see `Problems`) is one
 * `pvc: warning: ...` line on stderr; each invocation reports afresh (as a new process would).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const ctx = new CliContext(io);
  const program = buildProgram(ctx);
  resetBadValueReports();
  setBadValueLogger(lineLogger((text) => ctx.output.note(`pvc: warning: ${text}`)));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    return report(ctx, err);
  } finally {
    await ctx.close();
    setBadValueLogger(undefined);
  }
}

function report(ctx: CliContext, err: unknown): number {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT.ok;
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  ctx.output.clearProgress();
  if (err instanceof CliError) {
    ctx.io.stderr.write(`pvc: ${err.message}\n`);
    return err.exitCode;
  }
  if (err instanceof ZkPathError) {
    ctx.io.stderr.write(`pvc: ${err.message}\n`);
    return EXIT.usage;
  }
  if (err instanceof ZkError && ['CONNECTION_LOSS', 'OPERATION_TIMEOUT', 'SESSION_EXPIRED', 'CLOSED'].includes(err.code)) {
    ctx.io.stderr.write(`pvc: lost Zookeeper: ${describeError(err)}\n`);
    return EXIT.noCluster;
  }
  ctx.io.stderr.write(`pvc: ${describeError(err)}\n`);
  return EXIT.failed;
}
