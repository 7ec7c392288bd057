// admission.k8s.io/v1 as kube-apiserver sends and expects it. Plain JSON shapes: no client library.
import type { KubeObject, UserInfo } from '../kube/types.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_KIND = 'AdmissionReview';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
export const OPERATIONS: readonly Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object?: T | null;
  oldObject?: T | null;
  dryRun?: boolean;
  options?: Record<string, unknown> | null;
}

/** metav1.Status as carried in a denial. */
export interface AdmissionStatus {
  code?: number;
  message?: string;
  reason?: string;
  status?: 'Success' | 'Failure';
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  /** base64 of a JSON array of RFC 6902 operations. */
  patch?: string;
  patchType?: 'JSONPatch';
  auditAnnotations?: Record<string, string>;
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: typeof ADMISSION_KIND;
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** A review whose request has been checked by `decodeAdmissionReview`. */
export interface DecodedReview extends AdmissionReview {
  request: AdmissionRequest;
}
