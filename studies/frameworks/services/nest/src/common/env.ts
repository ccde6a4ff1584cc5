// What every program reads from its environment.

/** The variable's value; the program cannot start without it. */
export function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set`);
  }
  return value;
}

/** host and port of a HOST:PORT variable, such as HELLO_ADDR=127.0.0.1:4001. */
export function address(name: string): { host: string; port: number } {
  const value = required(name);
  const colon = value.lastIndexOf(':');
  const port = Number(value.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(`${name}=${value}: want HOST:PORT`);
  }
  return { host: value.slice(0, colon), port };
}

/** A duration such as 5s or 500ms, in milliseconds (the other frameworks read the same syntax). */
export function duration(name: string, fallbackMs: number): number {
  const value = process.env[name];
  if (!value) {
    return fallbackMs;
  }
  const match = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(value);
  if (!match || Number(match[1]) <= 0) {
    throw new Error(`${name}=${value}: want a duration such as 5s or 500ms`);
  }
  return Number(match[1]) * (match[2] === 's' ? 1000 : 1);
}
