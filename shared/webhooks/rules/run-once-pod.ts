// mutate-pod: a run-once Pod (restartPolicy Never or OnFailure) in an organization namespace gets
// a default activeDeadlineSeconds unless it sets one; annotation furnish.dev/pod-active-deadline-seconds
// on the namespace (privileged principals only) overrides the default.
import { KEY } from '../../keys.ts';
import type { StringMap } from '../../kube/types.ts';

export const POD_DEADLINE_ANNOTATION = 'furnish.dev/pod-active-deadline-seconds';

export interface PodShape {
  restartPolicy?: unknown;
  activeDeadlineSeconds?: unknown;
}

/** Whether the Pod may need a deadline at all: decided without reading its namespace. */
export function isRunOnceWithoutDeadline(spec: PodShape | undefined): boolean {
  const policy = spec?.restartPolicy;
  return (policy === 'Never' || policy === 'OnFailure') && (spec?.activeDeadlineSeconds === undefined || spec.activeDeadlineSeconds === null);
}

export type DeadlineDecision = { set: number; reason: string } | { skip: string };

/** The deadline for a run-once Pod in a namespace with these labels and annotations. */
export function podDeadline(namespace: { labels?: StringMap; annotations?: StringMap }, defaultSeconds: number): DeadlineDecision {
  const org = namespace.labels?.[KEY.organization];
  if (!org) return { skip: 'namespace belongs to no organization' };
  const override = namespace.annotations?.[POD_DEADLINE_ANNOTATION];
  if (override !== undefined) {
    const n = Number(override);
    if (/^[1-9][0-9]{0,9}$/.test(override) && Number.isSafeInteger(n)) return { set: n, reason: `activeDeadlineSeconds=${n} from namespace annotation ${POD_DEADLINE_ANNOTATION}` };
  }
  return { set: defaultSeconds, reason: `activeDeadlineSeconds=${defaultSeconds}: default for run-once Pods of organization "${org}"` };
}
