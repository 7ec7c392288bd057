// Server-side printing (placeholder while probing kubectl's needs).
import type { ResourceType } from './resources.ts';

export function wantsTable(_accept: string | undefined): boolean {
  return false;
}

export function asTable(_type: ResourceType, body: unknown): unknown {
  return body;
}
