// The Organization API (furnish.dev/v1alpha1, cluster-scoped): who owns which namespaces, how
// many. Plain JSON shapes: the webhooks import this without a client library.
import type { KubeObject, StringMap, Subject } from '../kube/types.ts';

export const ORGANIZATIONS_RESOURCE = 'organizations';
export interface OrganizationMember extends Subject {
  /** User only: this is the user's default organization. */
  default?: boolean;
}

/** A slot held by an admitted namespace CREATE (or transfer) until the namespace is counted. */
export interface Reservation {
  /** The admission request's uid: a retried review reuses its slot. */
  uid: string;
  namespace: string;
  /** RFC 3339; an expired reservation no longer counts. */
  expires: string;
}

export interface OrganizationCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export interface OrganizationStatus {
  /** Live (not terminating) namespaces labelled furnish.dev/organization=<name>, as last counted. */
  namespaces?: number;
  reservations?: Reservation[];
  /**
   * The newest namespace resourceVersion `namespaces` was counted from: the next true-up lists
   * namespaces at least this fresh (from the watch cache), never an older view.
   */
  countedResourceVersion?: string;
  conditions?: OrganizationCondition[];
}

export interface OrganizationSpec {
  members?: OrganizationMember[];
  namespaceQuota?: number;
  billing?: StringMap;
}

export interface Organization extends KubeObject {
  spec?: OrganizationSpec;
  status?: OrganizationStatus;
}

export function organizationName(org: Organization): string {
  return org.metadata.name ?? '';
}
