// TrafficExtension (extensions.istio.io): a Wasm module or inline Lua run by proxies.

import { list, obj, str } from './common/fields';
import { checkTargetRef, checkWorkloadSelector } from './common/selectors';
import { idx } from './common/report';
import { checkMatchPorts, checkWasmModule } from './wasm-plugin';
import type { SpecValidator } from './types';

/** Inline Lua is pushed to every selected proxy; istiod caps it at 64 KiB. */
export const MAX_LUA_INLINE_CODE_BYTES = 65536;

export const validateTrafficExtension: SpecValidator = (r, spec) => {
  const wasm = obj(r, spec['wasm'], 'spec.wasm');
  const lua = obj(r, spec['lua'], 'spec.lua');
  if ((wasm && lua) || (!wasm && !lua)) r.error('spec', 'exactly one of wasm or lua must be set');
  const refs = list(r, spec['targetRefs'], 'spec.targetRefs');
  if (spec['selector'] != null && refs) r.error('spec', 'only one of targetRefs or workloadSelector can be set');
  checkWorkloadSelector(r, spec['selector'], 'spec.selector');
  refs?.forEach((ref, i) => checkTargetRef(r, ref, idx('spec.targetRefs', i)));
  if (lua) {
    const code = str(r, lua['inlineCode'], 'spec.lua.inlineCode') ?? '';
    if (code.length === 0) r.error('spec.lua.inlineCode', 'lua.inlineCode cannot be empty');
    else if (Buffer.byteLength(code) > MAX_LUA_INLINE_CODE_BYTES)
      r.error('spec.lua.inlineCode', 'lua.inlineCode exceeds maximum size of 64KB');
  }
  if (wasm) checkWasmModule(r, wasm, 'spec.wasm');
  checkMatchPorts(r, spec['match'], 'spec.match');
};
