// Where the project's .proto files are (proto/ at the repository root), and the decoding options
// every reader of them shares. The CA, the xDS server and the ambient codec all load from here.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as protoLoader from '@grpc/proto-loader';

/** Field names as written, longs and enums as strings, defaults filled, oneofs named. */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The proto/ folder, found from this file in src/ (tests) or dist/src/ (built). */
export function protoDir(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'proto');
    if (fs.existsSync(path.join(candidate, 'xds.proto'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`proto/xds.proto not found above ${__dirname}`);
  }
}
