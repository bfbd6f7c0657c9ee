// The webhook package's public surface, for the process wiring and the CLI.

export { startWebhookServer, type WebhookServerHandle } from './server';
export { startWebhookConfigController, WebhookConfigController, VALIDATION_LEASE } from './config-controller';
export { reviewAdmission, MAX_REQUEST_BODY_BYTES, MAX_JSON_DEPTH, type AdmissionReply } from './admission';
export { MAX_REPORTED_ERRORS, MAX_REPORTED_TEXT_LENGTH, MAX_REPORTED_WARNINGS } from './validators/common/report';
export { validateConfig, findSchema, allSchemas } from './validators/registry';
export type { FieldError, ValidationResult } from './validators/common/report';
