// The namespace `furnish render` previews, built from flags the way the admission webhooks would
// have left it: name label set, creator annotation and organization label recorded.
import { KEY } from '../keys.ts';
import type { StringMap } from '../kube/types.ts';
import { dns1123LabelErrors, labelValueErrors, qualifiedNameErrors } from '../render/names.ts';
import type { NamespaceInfo, RenderContext } from '../render/types.ts';
import { UsageError } from './command.ts';

/** $(CREATOR) when neither --creator nor a furnish.dev/creator annotation says who. */
export const DEFAULT_CREATOR = 'preview-user';

export interface NamespaceFlags {
  name: string;
  labels: readonly string[];
  annotations: readonly string[];
  creator?: string;
  organization?: string;
}

/** `k=v` items into a map; `flag` names the option in errors. */
export function parseKeyValues(items: readonly string[], flag: string): StringMap {
  const map: StringMap = {};
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`--${flag}: "${item}" is not key=value`);
    const key = item.slice(0, eq);
    const [keyError] = qualifiedNameErrors(key);
    if (keyError) throw new UsageError(`--${flag}: invalid key "${key}": ${keyError}`);
    map[key] = item.slice(eq + 1);
  }
  return map;
}

function checkLabelValues(labels: StringMap): void {
  for (const [key, value] of Object.entries(labels)) {
    const [error] = labelValueErrors(value);
    if (error) throw new UsageError(`--labels: invalid value "${value}" for "${key}": ${error}`);
  }
}

/** A flag and the matching label or annotation must agree; either alone sets both. */
function reconcile(flagValue: string | undefined, mapValue: string | undefined, what: string): string | undefined {
  if (flagValue !== undefined && mapValue !== undefined && flagValue !== mapValue) {
    throw new UsageError(`${what} disagree: "${flagValue}" and "${mapValue}"`);
  }
  return flagValue ?? mapValue;
}

export function namespaceFromFlags(flags: NamespaceFlags): { ns: NamespaceInfo; ctx: RenderContext } {
  const [nameError] = dns1123LabelErrors(flags.name);
  if (nameError) throw new UsageError(`--namespace: invalid namespace name "${flags.name}": ${nameError}`);
  const labels = parseKeyValues(flags.labels, 'labels');
  const annotations = parseKeyValues(flags.annotations, 'annotations');
  const nameLabel = labels[KEY.metadataName];
  if (nameLabel !== undefined && nameLabel !== flags.name) {
    throw new UsageError(`--labels: ${KEY.metadataName} must equal the namespace name "${flags.name}", found "${nameLabel}"`);
  }
  labels[KEY.metadataName] = flags.name;
  const organization = reconcile(flags.organization, labels[KEY.organization], `--organization and label ${KEY.organization}`) ?? '';
  if (organization !== '') labels[KEY.organization] = organization;
  checkLabelValues(labels);
  const creator = reconcile(flags.creator, annotations[KEY.creator], `--creator and annotation ${KEY.creator}`) ?? DEFAULT_CREATOR;
  annotations[KEY.creator] = creator;
  return {
    ns: { name: flags.name, labels, annotations },
    ctx: { namespace: flags.name, creator, organization, annotations },
  };
}
