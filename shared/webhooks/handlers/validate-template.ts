// validate-template: the render foundation's validation of a NamespaceTemplate, as one denial
// listing every problem with its path.
import { allow, deny } from '../../admission/response.ts';
import { validateTemplate } from '../../render/index.ts';
import type { ValidationProblem } from '../../render/types.ts';
import type { AdmissionHandler } from '../deps.ts';
import { requireObject, requireResource } from '../request.ts';
import { GROUP } from '../../render/types.ts';

export function describeProblems(name: string, problems: readonly ValidationProblem[], kind = 'NamespaceTemplate'): string {
  const list = problems.map((p) => `${p.path}: ${p.message}`).join('; ');
  return `${kind} "${name}" is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}): ${list}`;
}

export const validateNamespaceTemplate: AdmissionHandler = (request) => {
  requireResource(request, 'validate-template', GROUP, 'namespacetemplates');
  const { operation } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || request.subResource) return allow(request);
  const object = requireObject(request, 'object');
  const problems = validateTemplate(object);
  if (problems.length === 0) return allow(request);
  return deny(request, describeProblems(object.metadata?.name ?? request.name ?? '', problems), 422);
};
