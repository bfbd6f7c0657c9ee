// What one manifest file under --configDir may hold. A file past a limit is refused whole, listed
// on /debug/localconfig with the reason, and every other file keeps loading.

/** A file larger than this is refused: local mode is for demos and tests, not bulk data. */
export const MAX_MANIFEST_BYTES = 8 * 1024 * 1024;

/**
 * Deepest nesting of mappings and lists in one document (the document's own mapping is level 1).
 * Kubernetes objects nest 10-20 levels and an EnvoyFilter patch carrying Envoy config about 30;
 * 100 leaves room for those while every recursive walk the store makes later (canonical JSON,
 * cloning, slimming) stays far below V8's call-stack limit. A file past it is refused whole.
 */
export const MAX_MANIFEST_DEPTH = 100;

/**
 * Most documents plus List items in one file. 8 MiB of realistic pods is about 9,000 objects, so
 * no honest file within MAX_MANIFEST_BYTES reaches it, while 10,000 empty documents (`---` lines,
 * 40 KB) are refused before each becomes a parsed document.
 */
export const MAX_MANIFEST_OBJECTS = 10_000;

/** The reasons a file is refused at a limit; one wording for the log, /debug/localconfig and tests. */
export const TOO_DEEP = `nested deeper than MAX_MANIFEST_DEPTH (${MAX_MANIFEST_DEPTH} levels); flatten the document or split it`;
export const TOO_MANY_OBJECTS = `more than MAX_MANIFEST_OBJECTS (${MAX_MANIFEST_OBJECTS}) documents and List items in one file; split it into several files`;
export const TOO_LARGE = `file is larger than ${MAX_MANIFEST_BYTES} bytes`;

/**
 * Alias expansions one YAML document may make (the yaml package's maxAliasCount): enough for the
 * anchors people use to share a block of labels, and far below what an alias bomb needs.
 */
export const MAX_YAML_ALIAS_COUNT = 100;
