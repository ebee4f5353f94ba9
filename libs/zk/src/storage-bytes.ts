/**
 * Byte sizes as the original's storage commands write and show them (`format_bytes_fromhuman` /
 * `format_bytes_tohuman` of its API): units B, K, M, G, T, P, each 1024 times the one before.
 */

/** Bytes per unit letter. */
export const BYTE_UNITS: Readonly<Record<string, number>> = {
  B: 1,
  K: 1024,
  M: 1024 ** 2,
  G: 1024 ** 3,
  T: 1024 ** 4,
  P: 1024 ** 5,
};

const SIZE_RE = /^(\d+(?:\.\d+)?)\s*(?:([bkmgtpBKMGTP])(?:i?[bB])?)?$/;

/**
 * `10G`, `512M`, `1.5T`, `10GiB`, `10GB` (all 1024-based, as the original), or plain bytes
 * (`1048576`). The result is whole bytes (fractions rounded down). Undefined when `text` is not a
 * size or the result is 0 or not a safe integer.
 */
export function parseByteSize(text: string): number | undefined {
  const m = SIZE_RE.exec(text.trim());
  if (!m) return undefined;
  const unit = BYTE_UNITS[(m[2] ?? 'B').toUpperCase()] ?? 1;
  const bytes = Math.floor(Number(m[1]) * unit);
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}

/**
 * The original's display of a size: the smallest unit in which the rounded-up figure has at most
 * four digits (`1073741824` → `1024M`, `10737418240` → `10G`, `1099511627776` → `1024G`).
 */
export function formatBytes(bytes: number): string {
  let shown = `${bytes}B`;
  for (const [unit, size] of Object.entries(BYTE_UNITS).sort(([, a], [, b]) => b - a)) {
    const n = Math.ceil(bytes / size);
    if (n <= 9999) shown = `${n}${unit}`;
  }
  return shown;
}
