/** The n-th distinct client address (10.0.0.0/8), sent as X-Forwarded-For to a server that trusts it. */
export function clientAddress(n: number): string {
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}
