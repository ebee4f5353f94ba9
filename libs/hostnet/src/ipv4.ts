/** Dotted quad → 32-bit unsigned number, or undefined when malformed. */
export function ipv4ToNumber(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    n = n * 256 + Number(p);
  }
  return n;
}

/** Whether `ip` lies inside the network of `address/prefix` (IPv4; false for malformed input). */
export function inSubnet(ip: string, address: string, prefix: number): boolean {
  const a = ipv4ToNumber(ip);
  const b = ipv4ToNumber(address);
  if (a === undefined || b === undefined || prefix < 0 || prefix > 32) return false;
  const size = 2 ** (32 - prefix);
  return Math.floor(a / size) === Math.floor(b / size);
}
