/** Display helpers of the console's pages: numbers, ages and times in one style. */

export function formatCount(value: number | undefined, capped = false): string {
  if (value === undefined) return 'n/a';
  return `${value.toLocaleString('en-US')}${capped ? '+' : ''}`;
}

export function formatAge(ms: number | undefined): string {
  if (ms === undefined) return 'n/a';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(ms)} ms`;
  if (abs < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  if (abs < 7_200_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

export function formatTime(value: Date | number | string | undefined | null): string {
  if (value === undefined || value === null) return '';
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toISOString();
}
