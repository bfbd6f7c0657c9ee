// The schema checks the chart tests rely on must catch what the API server would refuse.

import { kubeSchemaProblems, modelOf, structuralProblems } from './kube-schema';

const service = (spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec });

describe('Kubernetes schema check', () => {
  test('a well-formed object has no problems', () => {
    expect(kubeSchemaProblems(service({ ports: [{ name: 'grpc', port: 15010, targetPort: 'grpc' }], selector: { app: 'istiod' } }))).toEqual([]);
  });

  test('a field the API type does not have is reported with its path', () => {
    expect(kubeSchemaProblems(service({ portz: [] }))).toEqual(['Service/s.spec.portz: unknown field in V1ServiceSpec']);
  });

  test('a value of the wrong type is reported', () => {
    expect(kubeSchemaProblems(service({ ports: [{ port: '15010' }] }))).toEqual(['Service/s.spec.ports[0].port: expected a number, got "15010"']);
  });

  test('a missing required field is reported', () => {
    expect(kubeSchemaProblems(service({ ports: [{ name: 'x' }] }))).toEqual(['Service/s.spec.ports[0].port: required by V1ServicePort']);
  });

  test('apiVersion and kind map to the API type of that group version', () => {
    expect(modelOf('autoscaling/v2', 'HorizontalPodAutoscaler')).toBe('V2HorizontalPodAutoscaler');
    expect(() => modelOf('example.com/v1', 'Widget')).toThrow(/no Kubernetes API type for example.com\/v1 Widget/);
  });

  test('a schema node without a type is not structural', () => {
    expect(structuralProblems({ type: 'object', properties: { spec: { description: 'x' } } })).toEqual(['openAPIV3Schema.properties.spec: no type']);
    expect(structuralProblems({ type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } })).toEqual([]);
    expect(structuralProblems({ type: 'array' })).toEqual(['openAPIV3Schema: array without items']);
  });
});
