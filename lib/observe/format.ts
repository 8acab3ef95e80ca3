/**
 * Text for people: durations, counts and times as `sluice status` and `sluice run` print them,
 * and the short durations their flags take (`--interval 15m`, `--max-duration 1h30m`).
 */
import { parseInterval } from '../engine/duration';
import { InvalidOptionError } from '../engine/errors';

const SHORT_UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration flag: short units run together (`90s`, `15m`, `1h30m`, `2d`) or a Spark interval
 * (`15 minutes`, `1 hour 30 minutes`); positive.
 */
export function parseShortDuration(text: string, what: string): number {
  const t = text.trim().toLowerCase();
  let ms: number;
  if (/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(t)) {
    ms = 0;
    for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) ms += Number(m[1]) * SHORT_UNIT_MS[m[2]];
  } else if (/^\d/.test(t) && /\s/.test(t)) {
    ms = parseInterval(t, what).ms;
  } else {
    throw new InvalidOptionError(`${what} ${JSON.stringify(text)} is not a duration: write a number and a unit (ms, s, m, h, d), e.g. 15m or 1h30m`);
  }
  if (!(ms > 0)) throw new InvalidOptionError(`${what} ${JSON.stringify(text)} is not a positive duration: write e.g. 15m`);
  return ms;
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
