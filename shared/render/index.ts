// The render library: pure decisions about NamespaceTemplates (select, match, render, validate).
export * from './types.ts';
export { parseSelector, matchesSelector, selectorToString, EVERYTHING, SELECTOR_OPERATORS } from './selector.ts';
export type { CompiledSelector, ParsedSelector, Requirement, SelectorOperator } from './selector.ts';
export {
  matchTemplates,
  templatesNeedingPermission,
  newlyMatchedTemplates,
  requiresPermission,
  isTemplateDisabled,
  isOptedOut,
  isSystemNamespace,
  templateSelector,
  templateName,
  byTemplateName,
} from './match.ts';
export type { MatchOptions } from './match.ts';
export { renderNamespace, groupKindOf } from './render.ts';
export { validateTemplate, templateProblems, MAX_TEMPLATE_BYTES, SAMPLE_TOKEN_VALUES } from './validate.ts';
export { TOKEN_NAMES, substituteTokens, tokenValues } from './tokens.ts';
export type { TokenName, TokenValues } from './tokens.ts';
export { applySetId, applySetParent, formatGroupKinds, APPLYSET_PARENT_NAME, APPLYSET_TOOLING } from './applyset.ts';
export { canonicalJson, contentHash } from './hash.ts';
export { formatGroupKind, groupOf, isClusterScoped, objectKey } from './kinds.ts';
