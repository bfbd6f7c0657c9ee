// The app protocol a ztunnel gets for each Kubernetes Service port, as istiod's ConvertProtocol
// then toAppProtocolFromProtocol decide it.
import { AppProtocol } from '../../../src/ambient/messages';
import { kubePortAppProtocol, serviceEntryAppProtocol, WELL_KNOWN_TCP_PORTS } from '../../../src/ambient/protocols';
import { kubeService } from '../../../src/ambient/services';
import { service, viewOf } from '../../support/ambient/fixtures';

type PortCase = [{ name?: string; port: number; protocol?: string; appProtocol?: string }, AppProtocol];
/** Each case with the app protocol's name for the test title. */
const named = (cases: PortCase[]) => cases.map(([port, expected]) => [port, AppProtocol[expected], expected] as const);

describe('a Service port with no protocol prefix on a well-known port is TCP', () => {
  it('the well-known ports are SMTP, DNS, MySQL and MongoDB', () => {
    expect([...WELL_KNOWN_TCP_PORTS].sort((a, b) => a - b)).toEqual([25, 53, 3306, 27017]);
  });
  it.each(
    named([
      [{ name: 'smtp', port: 25 }, AppProtocol.TCP],
      [{ name: 'dns', port: 53 }, AppProtocol.TCP],
      [{ port: 53 }, AppProtocol.TCP],
      [{ name: 'db', port: 3306 }, AppProtocol.TCP],
      [{ name: 'mongodb', port: 27017 }, AppProtocol.TCP],
      [{ name: 'x', port: 3306, appProtocol: 'example.com/custom' }, AppProtocol.TCP],
      // A named protocol wins over the well-known port, even one with no app protocol of its own.
      [{ name: 'http', port: 25 }, AppProtocol.HTTP11],
      [{ name: 'mysql', port: 3306 }, AppProtocol.UNKNOWN],
      [{ name: 'mongo', port: 27017 }, AppProtocol.UNKNOWN],
      [{ name: 'redis-cache', port: 53 }, AppProtocol.UNKNOWN],
      // Other ports with an unknown prefix stay unknown; UDP is never TCP.
      [{ name: 'db', port: 3307 }, AppProtocol.UNKNOWN],
      [{ name: 'dns', port: 53, protocol: 'UDP' }, AppProtocol.UNKNOWN],
    ]),
  )('%j is %s', (port, _name, expected) => {
    expect(kubePortAppProtocol(port)).toBe(expected);
  });
  it('the Service sent to ztunnel carries TCP for an unnamed port 3306', () => {
    const s = service('db', { ports: [{ name: 'db', port: 3306 }] });
    expect(kubeService(s.object, viewOf([s]))!.ports).toEqual([
      { servicePort: 3306, targetPort: 3306, appProtocol: AppProtocol.TCP },
    ]);
  });
});

describe('port names as ConvertProtocol reads them', () => {
  it.each(
    named([
      // grpc-web is its own protocol (checked before the prefix split), with no ztunnel app protocol.
      [{ name: 'grpc-web', port: 8080 }, AppProtocol.UNKNOWN],
      [{ name: 'GRPC-Web-api', port: 8080 }, AppProtocol.UNKNOWN],
      [{ name: 'grpc-api', port: 8080 }, AppProtocol.GRPC],
      [{ name: 'HTTP2-x', port: 8080 }, AppProtocol.HTTP2],
      // Only UDP is cut short: an SCTP port is read by its name like a TCP one.
      [{ name: 'http-x', port: 8080, protocol: 'SCTP' }, AppProtocol.HTTP11],
      [{ name: 'http-x', port: 8080, protocol: 'UDP' }, AppProtocol.UNKNOWN],
    ]),
  )('%j is %s', (port, _name, expected) => {
    expect(kubePortAppProtocol(port)).toBe(expected);
  });
});

describe('a ServiceEntry port protocol is parsed whole, with no well-known port default', () => {
  it.each([
    ['TCP', AppProtocol.TCP],
    ['HTTPS', AppProtocol.TLS],
    ['grpc-web', AppProtocol.UNKNOWN],
    ['http-x', AppProtocol.UNKNOWN],
    [undefined, AppProtocol.UNKNOWN],
  ])('%s is %s', (protocol, expected) => {
    expect(serviceEntryAppProtocol(protocol)).toBe(expected);
  });
});
