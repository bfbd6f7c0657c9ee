// Realistic objects for tests and the hand-run server: a kubectl-style Pod (managedFields,
// last-applied annotation, full spec and status), Namespaces, Services.

import type { WatchTiming } from '../../../src/store/kube/kind-watcher';

export function namespace(name: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

export function service(namespace: string, name: string, selector: Record<string, string> = { app: name }) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      selector,
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10'],
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
    },
  };
}

/** A pod as `kubectl get pod -o json` shows it on a real cluster: most of it is never read. */
export function fatPod(namespace: string, name: string, i = 0) {
  const app = name.replace(/-[a-z0-9]+-[a-z0-9]+$/, '');
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const hash = '7d9f8c6b5';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      generateName: `${app}-${hash}-`,
      labels: { app, 'pod-template-hash': hash, version: 'v1', 'security.istio.io/tlsMode': 'istio' },
      annotations: {
        'ambient.istio.io/redirection': 'enabled',
        'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace },
          spec: { containers: [{ name: app, image: `registry.example.com/${app}:1.2.3` }] },
        }),
      },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${app}-${hash}`,
          uid: '5f0c7a34-1d0e-4c55-9a6e-2f7d1e9b8a01',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-01-01T00:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:generateName': {},
              'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {}, 'f:version': {} },
              'f:ownerReferences': { '.': {}, 'k:{"uid":"5f0c7a34-1d0e-4c55-9a6e-2f7d1e9b8a01"}': {} },
            },
            'f:spec': {
              'f:containers': {
                [`k:{"name":"${app}"}`]: {
                  '.': {},
                  'f:image': {},
                  'f:imagePullPolicy': {},
                  'f:name': {},
                  'f:ports': {
                    '.': {},
                    'k:{"containerPort":8080,"protocol":"TCP"}': {
                      '.': {},
                      'f:containerPort': {},
                      'f:name': {},
                      'f:protocol': {},
                    },
                  },
                  'f:resources': {},
                },
              },
              'f:dnsPolicy': {},
              'f:restartPolicy': {},
              'f:schedulerName': {},
              'f:serviceAccountName': {},
            },
          },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-01-01T00:00:05Z',
          fieldsType: 'FieldsV1',
          subresource: 'status',
          fieldsV1: {
            'f:status': {
              'f:conditions': {},
              'f:containerStatuses': {},
              'f:hostIP': {},
              'f:phase': {},
              'f:podIP': {},
              'f:podIPs': {},
              'f:startTime': {},
            },
          },
        },
      ],
    },
    spec: {
      volumes: [
        {
          name: 'kube-api-access-x7k2p',
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            ],
            defaultMode: 420,
          },
        },
      ],
      containers: [
        {
          name: app,
          image: `registry.example.com/${app}:1.2.3`,
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'LOG_LEVEL', value: 'info' },
            { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
          ],
          resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
          volumeMounts: [
            {
              name: 'kube-api-access-x7k2p',
              readOnly: true,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            },
          ],
          readinessProbe: {
            httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' },
            timeoutSeconds: 1,
            periodSeconds: 10,
            successThreshold: 1,
            failureThreshold: 3,
          },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: app,
      serviceAccount: app,
      nodeName: `node-${i % 50}`,
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: [
        {
          type: 'PodReadyToStartContainers',
          status: 'True',
          lastProbeTime: null,
          lastTransitionTime: '2026-01-01T00:00:03Z',
        },
        { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:01Z' },
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:05Z' },
        { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:05Z' },
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
      hostIP: `192.168.${(i >> 8) & 255}.${i & 255}`,
      hostIPs: [{ ip: `192.168.${(i >> 8) & 255}.${i & 255}` }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: '2026-01-01T00:00:00Z',
      containerStatuses: [
        {
          name: app,
          state: { running: { startedAt: '2026-01-01T00:00:04Z' } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: `registry.example.com/${app}:1.2.3`,
          imageID: `registry.example.com/${app}@sha256:4f5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0`,
          containerID: 'containerd://9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b',
          started: true,
        },
      ],
      qosClass: 'Burstable',
    },
  };
}

/** Watch timing for tests: quick retries, istiod's watch timeout, the default stall margin. */
export const FAST_WATCH_TIMING: WatchTiming = {
  backoff: { initialMs: 20, maxMs: 200 },
  missingKindRetryMs: 100,
  quickFailMs: 50,
  watchTimeoutSeconds: 300,
  stallMarginMs: 30_000,
};

/** A pod of a service account, on a node (or unscheduled), in a phase: what the CA's node checks read. */
export function scheduledPod(ns: string, name: string, sa: string, node: string | undefined, phase = 'Running') {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: { serviceAccountName: sa, containers: [{ name: 'c', image: 'x' }], ...(node ? { nodeName: node } : {}) },
    status: { phase },
  };
}
