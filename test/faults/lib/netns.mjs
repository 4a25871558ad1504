// A network namespace for one worker process, joined to the host by a veth pair: the host end
// (10.200.0.1/30) is where the row's Redis listens too, the worker's end (10.200.0.2/30) is the
// namespace's only link. `cut()` sets the host end down: from then on every packet between the
// worker and Redis is lost, both ways, and nothing tells either side (no RST, no FIN): TCP
// retransmits with its backoff until `heal()` sets the link up again. This is the suite's real
// network cut, through the kernel's TCP, where the fault proxy's rows (lib/proxy.mjs) stand in
// with a user-space copy. Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and `ip` (iproute2);
// `netnsUnsupported()` says why a machine cannot run it (the rows are then skipped, loudly).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The names and addresses the rows use (one namespace at a time: the suite runs rows in turn). */
export const NETNS = {
  name: 'hopper-faults',
  hostIf: 'hfaults-h',
  nsIf: 'hfaults-w',
  hostAddr: '10.200.0.1',
  nsAddr: '10.200.0.2',
  prefixLen: 30,
  subnet: '10.200.0.0/30',
};

/** `ip` from iproute2 (usually /usr/sbin/ip, which may not be on a user's PATH). */
export function ipCommand() {
  for (const path of ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip']) if (existsSync(path)) return path;
  return spawnSync('/bin/sh', ['-c', 'command -v ip'], { encoding: 'utf8' }).stdout.trim() || undefined;
}

function ip(...args) {
  const cmd = ipCommand();
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) {
    const why = (r.stderr || r.stdout || String(r.error ?? '')).trim();
    throw new Error(`ip ${args.join(' ')}: ${why || `exit ${r.status}`}`);
  }
  return r.stdout;
}

/** Removes what a previous run (crashed, or killed before its cleanup) may have left. */
export function removeLeftovers() {
  const cmd = ipCommand();
  if (!cmd) return;
  spawnSync(cmd, ['netns', 'delete', NETNS.name], { stdio: 'ignore' });
  spawnSync(cmd, ['link', 'delete', NETNS.hostIf], { stdio: 'ignore' });
}

let support;

/**
 * Why this machine cannot run the namespace rows (undefined: it can). Checked once, by creating
 * and removing a namespace and a veth pair for real: being root is not enough in a container
 * without CAP_SYS_ADMIN / CAP_NET_ADMIN.
 */
export function netnsUnsupported() {
  if (support !== undefined) return support || undefined;
  support = probe() ?? '';
  return support || undefined;
}

function probe() {
  if (process.platform !== 'linux') return `network namespaces are Linux only (this is ${process.platform})`;
  if (!ipCommand()) return '`ip` (iproute2) not found';
  if (process.getuid?.() !== 0) return 'network namespaces need root (CAP_SYS_ADMIN, CAP_NET_ADMIN)';
  removeLeftovers();
  // The rows' subnet must not be one this machine already routes (they would cut real traffic).
  const routes = spawnSync(ipCommand(), ['-4', 'route', 'show', 'to', 'match', NETNS.hostAddr], { encoding: 'utf8' }).stdout ?? '';
  const clash = routes.split('\n').find((line) => line.trim() && !line.startsWith('default'));
  if (clash) return `${NETNS.subnet} is already routed on this machine (${clash.trim()})`;
  const ns = new NetNs();
  try {
    ns.create();
    return undefined;
  } catch (err) {
    return `cannot create a network namespace with a veth pair (${String(err?.message ?? err).split('\n')[0]})`;
  } finally {
    ns.destroy();
  }
}

export class NetNs {
  /** The command prefix that runs a program inside the namespace. */
  get exec() {
    return [ipCommand(), 'netns', 'exec', NETNS.name];
  }

  /** Creates the namespace and the veth pair, addresses both ends and sets them up. */
  create() {
    removeLeftovers();
    try {
      ip('netns', 'add', NETNS.name);
      ip('link', 'add', NETNS.hostIf, 'type', 'veth', 'peer', 'name', NETNS.nsIf);
      ip('link', 'set', NETNS.nsIf, 'netns', NETNS.name);
      ip('addr', 'add', `${NETNS.hostAddr}/${NETNS.prefixLen}`, 'dev', NETNS.hostIf);
      ip('link', 'set', NETNS.hostIf, 'up');
      ip('netns', 'exec', NETNS.name, ipCommand(), 'addr', 'add', `${NETNS.nsAddr}/${NETNS.prefixLen}`, 'dev', NETNS.nsIf);
      ip('netns', 'exec', NETNS.name, ipCommand(), 'link', 'set', NETNS.nsIf, 'up');
      ip('netns', 'exec', NETNS.name, ipCommand(), 'link', 'set', 'lo', 'up');
    } catch (err) {
      this.destroy();
      throw err;
    }
    this.created = true;
  }

  /** Every packet between the namespace and the host is lost from now on; nothing is closed. */
  cut() {
    ip('link', 'set', NETNS.hostIf, 'down');
  }

  heal() {
    ip('link', 'set', NETNS.hostIf, 'up');
  }

  /** Removes the namespace and the veth pair (deleting one end deletes the other). Never throws. */
  destroy() {
    removeLeftovers();
    this.created = false;
  }
}
