// WorkloadEntry (networking.istio.io): a VM or external workload, also the shape of ServiceEntry
// endpoints.

import { fqdnError } from './common/hosts';
import { labelErrors } from './common/hosts';
import { int, JsonObject, obj, quote, str, strMap, UINT32 } from './common/fields';
import { isIPAddress, UNIX_ADDRESS_PREFIX, unixAddressError } from './common/net';
import { portError, portNameError } from './common/ports';
import { at, key, Report } from './common/report';
import type { SpecValidator } from './types';

export interface WorkloadEntryContext {
  /** Port names the owning ServiceEntry declares; undefined for a standalone WorkloadEntry. */
  servicePorts?: ReadonlySet<string>;
  /** A standalone WorkloadEntry may use a DNS name; STATIC ServiceEntry endpoints may not. */
  allowFQDN: boolean;
}

export function checkWorkloadEntry(r: Report, we: JsonObject, path: string, ctx: WorkloadEntryContext): void {
  const address = str(r, we['address'], at(path, 'address')) ?? '';
  const network = str(r, we['network'], at(path, 'network')) ?? '';
  if (address === '') {
    if (network === '') {
      r.error(at(path, 'address'), 'address is required');
      return;
    }
    r.warn(at(path, 'address'), `address is unset with network "${network}"`);
  }
  const ports = obj(r, we['ports'], at(path, 'ports'));
  const portCount = Object.keys(ports ?? {}).length;
  const unix = address.startsWith(UNIX_ADDRESS_PREFIX);
  if (unix) {
    const err = unixAddressError(address.slice(UNIX_ADDRESS_PREFIX.length));
    if (err) r.error(at(path, 'address'), err);
    if (portCount > 0) r.error(at(path, 'ports'), `unix endpoint ${address} must not include ports`);
  } else if (address !== '' && !isIPAddress(address)) {
    if (!ctx.allowFQDN) r.error(at(path, 'address'), `endpoint address "${address}" is not a valid IP address`);
    else if (fqdnError(address))
      r.error(at(path, 'address'), `endpoint address "${address}" is not a valid FQDN or an IP address`);
  }
  for (const [name, value] of Object.entries(ports ?? {})) {
    const p = key(at(path, 'ports'), name);
    const port = int(r, value, p, UINT32);
    if (ctx.servicePorts && !ctx.servicePorts.has(name))
      r.error(p, `endpoint port ${quote(value)} is not defined by the service entry`);
    const nameErr = portNameError(name);
    if (nameErr) r.error(p, nameErr);
    if (port !== undefined) {
      const err = portError(port);
      if (err) r.error(p, err);
    }
  }
  const labels = strMap(r, we['labels'], at(path, 'labels'));
  for (const err of labelErrors(labels ?? {})) r.error(at(path, 'labels'), err);
  if (unix && ctx.servicePorts && ctx.servicePorts.size !== 1)
    r.error(path, 'exactly 1 service port required for unix endpoints');
}

export const validateWorkloadEntry: SpecValidator = (r, spec) => {
  checkWorkloadEntry(r, spec, 'spec', { allowFQDN: true });
};
