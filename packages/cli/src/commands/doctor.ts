/** `hopper doctor`: audit the server and the queues, with evidence and fixes; non-zero on errors. */
import type { DoctorReport } from 'hopper-queue';
import { intOption, type Command } from './command.js';
import { parseDuration } from './queue-ops.js';

function render(report: DoctorReport): string {
  const lines: string[] = [];
  for (const f of report.findings) {
    lines.push(`${f.severity.toUpperCase().padEnd(7)} ${f.queue ?? 'redis'}: ${f.title}  [${f.check}]`);
    lines.push(`        saw: ${f.evidence}`);
    lines.push(`        fix: ${f.fix}`);
  }
  const count = (severity: string, word: string) => {
    const n = report.findings.filter((f) => f.severity === severity).length;
    return `${n} ${word}${n === 1 ? '' : 's'}`;
  };
  const summary =
    report.findings.length === 0 ? 'No finding' : `${count('error', 'error')}, ${count('warning', 'warning')}, ${count('info', 'note')}`;
  // A SQLite database names itself in its version (`SQLite 3.x`); Redis's is a bare number.
  const server = report.server.version.startsWith('SQLite') ? report.server.version : `Redis ${report.server.version}`;
  lines.push(`${summary}: ${server}, ${report.queues.length} queue${report.queues.length === 1 ? '' : 's'} checked.`);
  return lines.join('\n');
}

export const doctorCommand: Command = {
  words: ['doctor'],
  summary: 'audit the server (Redis, or a SQLite database) and the queues for what loses jobs or makes them fall behind (exit 1 on errors)',
  usage: 'hopper doctor [<queue>...] [--backlog 10000] [--oldest 5m] [--lock-duration 30s] [--sample 200] [--strict]',
  options: {
    backlog: { type: 'string' },
    oldest: { type: 'string' },
    'lock-duration': { type: 'string' },
    sample: { type: 'string' },
    strict: { type: 'boolean' },
  },
  async run(ctx, { positionals, values }) {
    const text = (name: string): string | undefined => {
      const value = values[name];
      return typeof value === 'string' ? value : undefined;
    };
    const options = {
      backlog: intOption(values, 'backlog', 10_000, 1),
      sample: intOption(values, 'sample', 200, 1),
      ...(text('oldest') ? { oldestWaitingMs: parseDuration(text('oldest'), 'oldest') } : {}),
      ...(text('lock-duration') ? { lockDurationMs: parseDuration(text('lock-duration'), 'lock-duration') } : {}),
      ...(positionals.length > 0 ? { queues: positionals } : {}),
    };
    if (positionals.length > 0) for (const name of positionals) await ctx.queue(name); // unknown names fail here
    const report = await ctx.admin.doctor(options);
    ctx.print(report, render);
    const failing = report.findings.some((f) => f.severity === 'error' || (values.strict === true && f.severity === 'warning'));
    return failing ? 1 : 0;
  },
};
