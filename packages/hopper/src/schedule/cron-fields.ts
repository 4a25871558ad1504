/**
 * Checks the text of a cron pattern before croner parses it, so that the common mistakes get a
 * precise reason and a message naming the field: wrong field count, `@reboot`, values out of
 * range, `*\/0`, reversed ranges, and day fields whose meaning differs between cron dialects.
 * croner 11.0.1 still parses the result and has the last word on syntax.
 */
import { invalidSchedule } from './schedule-error.js';

/** The `@nicknames` Hopper accepts, and what they stand for. */
export const CRON_NICKNAMES: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

interface FieldRule {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

/** The six fields in croner's order once a 5-field pattern has its seconds field added. */
const FIELDS: readonly FieldRule[] = [
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  },
  { name: 'day-of-week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

const DAY_OF_MONTH = 3;
const DAY_OF_WEEK = 5;

/** A pattern whose text passed the checks: its normalised form and its six fields. */
export interface CheckedCronText {
  /** The pattern as stored: trimmed, single spaces, nickname expanded, 5 or 6 fields. */
  readonly normalized: string;
  /** Six fields, seconds first (`0` added in front of a 5-field pattern). */
  readonly fields: readonly string[];
}

/**
 * Checks a cron pattern's text and normalises it.
 *
 * @throws InvalidScheduleError with reason `cron-empty`, `cron-nickname`, `cron-field-count`,
 *   `cron-out-of-range`, `cron-step`, `cron-range`, `cron-syntax` or `cron-ambiguous-days`.
 */
export function checkCronText(pattern: unknown): CheckedCronText {
  if (typeof pattern !== 'string') {
    throw invalidSchedule('cron-syntax', `pattern must be a cron string such as '0 9 * * MON-FRI', got ${typeof pattern}.`);
  }
  let text = pattern.trim().replace(/\s+/g, ' ');
  if (text === '') {
    throw invalidSchedule(
      'cron-empty',
      "pattern is empty. Give a cron pattern such as '*/5 * * * *' (every 5 minutes), or use " + '`every` for a fixed interval.',
    );
  }
  if (text.startsWith('@')) text = expandNickname(text);
  const parts = text.split(' ');
  if (parts.length !== 5 && parts.length !== 6) {
    throw invalidSchedule(
      'cron-field-count',
      `cron pattern '${text}' has ${parts.length} fields; Hopper takes 5 (minute hour ` +
        'day-of-month month day-of-week) or 6 (second first). Year fields are not supported.',
    );
  }
  const fields = parts.length === 5 ? ['0', ...parts] : parts;
  fields.forEach((field, index) => checkField(text, field, FIELDS[index]));
  checkDayFields(text, fields);
  return { normalized: text, fields };
}

function expandNickname(text: string): string {
  const nickname = text.toLowerCase();
  const expansion = CRON_NICKNAMES[nickname];
  if (expansion !== undefined) return expansion;
  const known = Object.keys(CRON_NICKNAMES).join(', ');
  if (nickname === '@reboot') {
    throw invalidSchedule(
      'cron-nickname',
      `'@reboot' has no fire time in a job queue. To run a job when your service starts, add it ` +
        `from your start-up code; for schedules use a pattern or one of ${known}.`,
    );
  }
  throw invalidSchedule('cron-nickname', `Unknown cron nickname '${text}'. Use one of ${known}.`);
}

function checkField(pattern: string, raw: string, rule: FieldRule): void {
  const where = `cron pattern '${pattern}', ${rule.name} field '${raw}'`;
  if (rule.name === 'day-of-week' && raw.startsWith('+')) {
    throw invalidSchedule(
      'cron-syntax',
      `${where}: the '+' (AND day fields) modifier is not supported. Day-of-month and ` +
        'day-of-week are OR-ed when both are restricted; restrict only one of them.',
    );
  }
  // croner reads SUN at the end of a range as 7 (MON-SUN), so a range never ends below its start.
  let field = rule.name === 'day-of-week' ? raw.toUpperCase().replaceAll('-SUN', '-7') : raw.toUpperCase();
  rule.names?.forEach((name, index) => {
    field = field.replaceAll(name, String(index + rule.min));
  });
  for (const item of field.split(',')) checkItem(where, item, rule);
}

function checkItem(where: string, item: string, rule: FieldRule): void {
  const range = /^(?:\*|\?|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
  if (range !== null) {
    const [, from, to, step] = range;
    if (from !== undefined) checkValue(where, Number(from), rule);
    if (to !== undefined) checkValue(where, Number(to), rule);
    if (from !== undefined && to !== undefined && Number(from) > Number(to)) {
      throw invalidSchedule(
        'cron-range',
        `${where}: range ${from}-${to} runs backwards. Write it low-high (${to}-${from}), or as ` +
          `a list (${from}-${rule.max},${rule.min}-${to}) to wrap around.`,
      );
    }
    if (step !== undefined) checkStep(where, Number(step), rule);
    return;
  }
  // Modifiers croner supports: nW (nearest weekday), nL (last weekday n), n#k (k-th weekday n).
  const modified = /^(\d+)(?:W|L|#(\d+))$/.exec(item);
  if (modified !== null) {
    checkValue(where, Number(modified[1]), rule);
    if (modified[2] !== undefined && (Number(modified[2]) < 1 || Number(modified[2]) > 5)) {
      throw invalidSchedule(
        'cron-out-of-range',
        `${where}: '#${modified[2]}' asks for an occurrence a month cannot have; use #1 to #5, or L for the last one.`,
      );
    }
  }
}

function checkValue(where: string, value: number, rule: FieldRule): void {
  if (value < rule.min || value > rule.max) {
    throw invalidSchedule('cron-out-of-range', `${where}: ${value} is outside ${rule.name} values ${rule.min}-${rule.max}.`);
  }
}

function checkStep(where: string, step: number, rule: FieldRule): void {
  const span = rule.name === 'day-of-week' ? 7 : rule.max - rule.min + 1;
  if (step < 1 || step > span) {
    throw invalidSchedule(
      'cron-step',
      `${where}: a step of ${step} is not allowed; use a step from 1 to ${span} (*/${Math.min(span, 5)}).`,
    );
  }
}

/**
 * Refuses a stepped day field beside a restricted other day field. Vixie cron reads a field that
 * starts with `*` as unrestricted (so `0 0 1-7 * *\/7` runs on days 1-7 that are Sundays), most
 * other crons read it as restricted and OR it with the other day field (days 1-7 and every Sunday).
 * Hopper refuses rather than pick one silently.
 */
function checkDayFields(pattern: string, fields: readonly string[]): void {
  const dom = fields[DAY_OF_MONTH];
  const dow = fields[DAY_OF_WEEK];
  const isStar = (field: string): boolean => field === '*' || field === '?';
  const isSteppedStar = (field: string): boolean => /^[*?]\//.test(field);
  if ((isSteppedStar(dom) && !isStar(dow)) || (isSteppedStar(dow) && !isStar(dom))) {
    throw invalidSchedule(
      'cron-ambiguous-days',
      `cron pattern '${pattern}': day-of-month '${dom}' with day-of-week '${dow}' is ambiguous ` +
        '(cron dialects disagree on whether a stepped day field is OR-ed or AND-ed with the ' +
        'other). Write the stepped field as a list or range (e.g. 1-31/2 or 0,2,4,6), or make ' +
        'the other day field *.',
    );
  }
}
