// Turns the collected runs into bench/results/<name>.md and .json.

import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { summarize } from './stats.mjs';

/**
 * What the figures were measured on, for the report header. `loadAtStart` is the 1-minute load
 * average before the first run: other work on the machine makes every figure noisier.
 */
export function describeMachine({ redisVersion, libraries, loadAtStart }) {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    ramGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    redis: redisVersion,
    libraries,
    loadAtStart,
  };
}

/**
 * Median/min/max per (case, metric, library) and the Hopper/BullMQ ratio of medians. A library
 * the scenario does not apply to has no figure (null) and its reason in the row's
 * `notApplicable` ({ [lib]: reason }, present only on such rows).
 * @param {{ scenario: object, label: string }[]} cases in report order
 * @param {(label: string, lib: string) => Record<string, number>[]} runsOf metrics of each
 *        successful run of a case for a library
 */
export function summarizeResults(cases, libs, runsOf) {
  const rows = [];
  for (const { scenario, label } of cases) {
    for (const m of scenario.metrics) {
      const notApplicable = {
        ...scenario.notApplicable,
        ...(m.redis && !scenario.notApplicable?.['hopper-sqlite'] && { 'hopper-sqlite': 'no Redis' }),
      };
      /** @type {Record<string, { median: number, min: number, max: number, runs: number[] } | null>} */
      const byLib = {};
      for (const lib of libs) {
        const values = runsOf(label, lib).map((metrics) => metrics[m.key]);
        byLib[lib] = values.length > 0 ? { ...summarize(values), runs: values } : null;
      }
      const hopper = byLib.hopper?.median;
      const bullmq = byLib.bullmq?.median;
      // A ratio of values that can be zero or negative (lateness) would mislead: leave it out.
      const ratio = hopper !== undefined && bullmq !== undefined && hopper > 0 && bullmq > 0 ? hopper / bullmq : null;
      rows.push({
        scenario: scenario.id,
        case: label,
        metric: m.key,
        label: m.label,
        unit: m.unit,
        better: m.better,
        digits: m.digits,
        hopper: byLib.hopper ?? null,
        bullmq: byLib.bullmq ?? null,
        ratio,
        'hopper-sqlite': byLib['hopper-sqlite'] ?? null,
        ...(Object.keys(notApplicable).length > 0 && { notApplicable }),
      });
    }
  }
  return rows;
}

const formatNumber = (value, digits) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** A library's cell: its figure, `n/a (why)` where the scenario does not apply, `—` when not measured. */
function formatCell(row, lib) {
  const reason = row.notApplicable?.[lib];
  return reason === undefined ? formatSummary(row[lib], row.digits) : `n/a (${reason})`;
}

function formatSummary(summary, digits) {
  if (summary === null) return '—';
  const median = formatNumber(summary.median, digits);
  if (summary.runs.length === 1) return median;
  return `${median} [${formatNumber(summary.min, digits)}–${formatNumber(summary.max, digits)}]`;
}

function formatRatio(row) {
  if (row.ratio === null) return '—';
  return `${row.ratio.toFixed(2)}× (${row.better} is better)`;
}

/** A markdown table padded the way Prettier formats one, so the file passes `prettier --check`. */
function markdownTable(header, rows) {
  const widths = header.map((cell, column) => Math.max(3, cell.length, ...rows.map((row) => row[column].length)));
  const line = (cells) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  return [line(header), `| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** Renders the report as markdown. */
export function renderMarkdown(report) {
  const { machine, settings } = report;
  const withSqlite = settings.libs.includes('hopper-sqlite');
  const libraries = Object.entries(machine.libraries)
    .map(([lib, version]) => `${lib} ${version}`)
    .join(', ');
  const lines = [
    '# Benchmark results',
    '',
    'Hopper and BullMQ measured side by side on the same Redis, and Hopper on its embedded SQLite backend (a file database on the same machine). Method and caveats: `docs/performance.md`.',
    '',
    `- Date: ${report.date}`,
    `- Command: \`${report.command}\``,
    `- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.ramGiB} GiB RAM, ${machine.os}; load average ${machine.loadAtStart.toFixed(2)} at start`,
    `- Software: Node ${machine.node}, Redis ${machine.redis} (default settings, no persistence), ${libraries}`,
    `- Runs per figure: ${settings.runs}${settings.runs > 1 ? ', each cell is the median [min–max]' : ''}${settings.quick ? ' (quick mode: small sizes, figures not comparable)' : ''}`,
    '',
    markdownTable(
      ['Scenario', 'Metric', 'Hopper', 'BullMQ', 'Hopper/BullMQ', ...(withSqlite ? ['Hopper on SQLite'] : [])],
      report.results.map((row) => [
        row.case,
        `${row.label} (${row.unit})`,
        formatCell(row, 'hopper'),
        formatCell(row, 'bullmq'),
        formatRatio(row),
        ...(withSqlite ? [formatCell(row, 'hopper-sqlite')] : []),
      ]),
    ),
  ];
  const section = (title, items) => {
    if (items.length > 0) lines.push('', `## ${title}`, '', ...items.map((item) => `- ${item}`));
  };
  section('Notes', report.notes);
  section('Skipped', report.skipped);
  section(
    'Errors',
    report.errors.map((e) => `${e.case}, ${e.lib}, run ${e.run}: ${e.message.split('\n')[0]}`),
  );
  return `${lines.join('\n')}\n`;
}

/** Writes `<dir>/<name>.md` and `<dir>/<name>.json`; returns their paths. */
export function writeReport(dir, name, report) {
  mkdirSync(dir, { recursive: true });
  const markdownPath = path.join(dir, `${name}.md`);
  const jsonPath = path.join(dir, `${name}.json`);
  writeFileSync(markdownPath, renderMarkdown(report));
  writeFileSync(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  return { markdownPath, jsonPath };
}
