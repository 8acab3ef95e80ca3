/**
 * Text for people: durations, counts and times as `sluice status` and `sluice run` print them,
 * and the short durations their flags take (`--interval 15m`, `--max-duration 1h30m`).
 */
import { parseInterval } from '../engine/duration';
import { InvalidOptionError } from '../engine/errors';

const SHORT_UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** A duration in the short form (units run together) or as a Spark interval; null when it is neither. */
function readDuration(text: string, what: string): { ms: number; months: number } | null {
  const t = (text ?? '').trim().toLowerCase();
  if (/^(\d+(\.\d+)?(ms|s|m|h|d|w))+$/.test(t)) {
    let ms = 0;
    for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g)) ms += Number(m[1]) * SHORT_UNIT_MS[m[2]];
    return { ms, months: 0 };
  }
  try {
    const { us, months } = parseInterval(t, what);
    return { ms: us / 1000, months };
  } catch {
    return null;
  }
}

/**
 * A duration flag (`--since 7d`, `--delay 1h30m`), in the short form (ms, s, m, h, d, w) or as a
 * Spark interval ("15 minutes"); months and years are refused (no fixed length); zero is allowed.
 */
export function parseDurationFlag(text: string, flag: string): number {
  const parsed = readDuration(text, flag);
  if (!parsed) throw new InvalidOptionError(`${flag} ${JSON.stringify(text)} is not a duration: write e.g. 15m, 7d, 1h30m or "15 minutes"`);
  if (parsed.months !== 0 || parsed.ms < 0) {
    throw new InvalidOptionError(`${flag} ${JSON.stringify(text)} must be a fixed, non-negative duration: write it in weeks, days, hours or minutes, e.g. 30d`);
  }
  return parsed.ms;
}

/** A positive duration flag (`--interval 15m`, `--max-duration 1h30m`), read as parseDurationFlag reads one. */
export function parseShortDuration(text: string, what: string): number {
  const parsed = readDuration(text, what);
  if (!parsed) throw new InvalidOptionError(`${what} ${JSON.stringify(text)} is not a duration: write a number and a unit (ms, s, m, h, d), e.g. 15m or 1h30m`);
  if (parsed.months !== 0 || !(parsed.ms > 0)) throw new InvalidOptionError(`${what} ${JSON.stringify(text)} is not a positive duration: write e.g. 15m`);
  return parsed.ms;
}

/** `850ms`, `1.2s`, `14m 10s`, `2h 5m`, `3d 4h`: two units at most. */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  const sign = ms < 0 ? '-' : '';
  if (abs < 1000) return `${sign}${Math.round(abs)}ms`;
  if (abs < 60_000) return `${sign}${(abs / 1000).toFixed(abs < 10_000 ? 1 : 0)}s`;
  const parts: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1000, 's'],
  ];
  const first = parts.findIndex(([unit]) => abs >= unit);
  const [bigUnit, bigName] = parts[first];
  const [smallUnit, smallName] = parts[first + 1];
  const big = Math.floor(abs / bigUnit);
  const small = Math.floor((abs - big * bigUnit) / smallUnit);
  return `${sign}${big}${bigName}${small ? ` ${small}${smallName}` : ''}`;
}

/** 1234567 -> `1,234,567` (always the same separators, whatever the machine's locale). */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** An ISO time as `2026-10-01 12:31:00` (UTC, to the second). */
export function formatTime(iso: string): string {
  return iso.replace('T', ' ').replace(/(\.\d+)?Z$/, '');
}

/** A fraction as a whole percentage (`<1%` for a little above zero). */
export function formatPercent(fraction: number): string {
  return fraction > 0 && fraction < 0.005 ? '<1%' : `${Math.round(fraction * 100)}%`;
}

/** Bytes as `512 B`, `3.4 KB`, `12 MB` (powers of 1024). */
export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}
