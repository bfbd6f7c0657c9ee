// Listener addresses in istiod's "host:port" form.

export interface ListenAddress {
  /** Empty means every interface, as Go's net.Listen(":15010") does. */
  host: string;
  /** 0 asks the kernel for a free port. */
  port: number;
}

/**
 * Parses "host:port", ":port" or "[v6]:port". An empty string means "disabled" and yields null,
 * as an empty --grpcAddr disables that listener in istiod.
 */
export function parseListenAddress(text: string): ListenAddress | null {
  if (text === '') return null;
  let host: string;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0 || text[close + 1] !== ':') throw new Error(`invalid address "${text}": expected [ipv6]:port`);
    host = text.slice(1, close);
    portText = text.slice(close + 2);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) throw new Error(`invalid address "${text}": expected host:port, e.g. ":15010" or "127.0.0.1:0"`);
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(':'))
      throw new Error(`invalid address "${text}": put an IPv6 host in brackets, e.g. "[::1]:15010"`);
  }
  if (!/^\d+$/.test(portText)) throw new Error(`invalid address "${text}": port "${portText}" is not a number`);
  const port = Number(portText);
  if (port > 65535) throw new Error(`invalid address "${text}": port ${port} is above 65535`);
  return { host, port };
}

export function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
