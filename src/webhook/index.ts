// The webhook package's public surface, for the process wiring and the CLI.

export { startWebhookServer, type WebhookServerHandle } from './server';
export { startWebhookConfigController, WebhookConfigController, VALIDATION_LEASE } from './config-controller';
export { reviewAdmission, MAX_REQUEST_BODY_BYTES, type AdmissionReply } from './admission';
export { validateConfig, findSchema, allSchemas } from './validators/registry';
export type { FieldError, ValidationResult } from './validators/common/report';
