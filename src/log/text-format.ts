// istiod's console log layout for --log_as_json=false: time, level, scope and message separated by
// tabs, then the structured fields as key=value. The JSON line pino produced is the input, so both
// layouts carry exactly the same facts.

/** Fields every JSON line carries that the text layout places in its own columns or drops. */
const COLUMNS = new Set(['level', 'time', 'scope', 'msg', 'pid']);

function fieldText(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  if (value !== null && typeof value === 'object' && 'message' in value && typeof value.message === 'string')
    return JSON.stringify(value.message);
  // JSON.stringify(undefined) is undefined at run time, whatever its declared type says.
  return value === undefined ? 'undefined' : JSON.stringify(value);
}

/** istiod prints microseconds; pino's ISO time has milliseconds. */
function istiodTime(iso: unknown): string {
  return typeof iso === 'string' ? iso.replace(/(\.\d{3})Z$/, '$1000Z') : new Date().toISOString();
}

/** One JSON log line (with or without its newline) as one text line ending in a newline. */
export function jsonLineToText(line: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  if (parsed === null || typeof parsed !== 'object') return `${line.trimEnd()}\n`;
  const record = parsed as Record<string, unknown>;
  const level = typeof record['level'] === 'string' ? record['level'] : 'info';
  const scope = typeof record['scope'] === 'string' ? record['scope'] : 'default';
  const msg = typeof record['msg'] === 'string' ? record['msg'] : '';
  const fields = Object.entries(record)
    .filter(([k]) => !COLUMNS.has(k))
    .map(([k, v]) => `${k}=${fieldText(v)}`);
  const head = `${istiodTime(record['time'])}\t${level === 'warn' ? 'warning' : level}\t${scope}\t${msg}`;
  return `${fields.length > 0 ? `${head}\t${fields.join(' ')}` : head}\n`;
}
