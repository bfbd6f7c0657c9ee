// What a run leaves outside its scratch folder (processes, network namespaces) is undone however it
// ends: normally, on an error, or on SIGINT/SIGTERM (Ctrl-C, a CI timeout).

const hooks = new Set<() => void>();
let installed = false;

function runHooks(): void {
  for (const hook of hooks) {
    try {
      hook();
    } catch {
      // Best effort: one failed undo must not keep the others from running.
    }
  }
  hooks.clear();
}

/** Runs `undo` (synchronously) when the process exits; returns a function that forgets it. */
export function atExit(undo: () => void): () => void {
  if (!installed) {
    installed = true;
    process.once('exit', runHooks);
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => {
        runHooks();
        process.exit(signal === 'SIGINT' ? 130 : 143);
      });
  }
  hooks.add(undo);
  return () => hooks.delete(undo);
}
