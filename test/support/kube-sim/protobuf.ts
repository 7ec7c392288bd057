// Decoding of `application/vnd.kubernetes.protobuf` request bodies. kubectl 1.32 sends protobuf
// from its typed commands (`create namespace|configmap|secret|serviceaccount|quota|role|...`,
// `auth can-i`, `auth whoami`) and accepts JSON back, so kube-sim only decodes, and only the
// kinds those commands send. Field numbers are those of the Kubernetes generated.proto files.
import { isObject } from './fieldsets.ts';
import { ApiError } from './errors.ts';

type Scalar = 'string' | 'bytes' | 'int' | 'bool' | 'time' | 'quantity';
type FieldType = Scalar | { message: string };

interface Field {
  name: string;
  type: FieldType;
  repeated?: boolean;
  /** map<string, type>: entries are messages with key = 1 and value = 2. */
  map?: boolean;
}

const str = (name: string): Field => ({ name, type: 'string' });
const strs = (name: string): Field => ({ name, type: 'string', repeated: true });
const msg = (name: string, message: string, repeated = false): Field => ({ name, type: { message }, repeated });
const stringMap = (name: string): Field => ({ name, type: 'string', map: true });

const META = msg('metadata', 'ObjectMeta');

const MESSAGES: Record<string, Record<number, Field>> = {
  Unknown: { 1: msg('typeMeta', 'TypeMeta'), 2: { name: 'raw', type: 'bytes' }, 3: str('contentEncoding'), 4: str('contentType') },
  TypeMeta: { 1: str('apiVersion'), 2: str('kind') },
  ObjectMeta: {
    1: str('name'), 2: str('generateName'), 3: str('namespace'), 4: str('selfLink'), 5: str('uid'), 6: str('resourceVersion'),
    7: { name: 'generation', type: 'int' }, 8: { name: 'creationTimestamp', type: 'time' }, 9: { name: 'deletionTimestamp', type: 'time' },
    10: { name: 'deletionGracePeriodSeconds', type: 'int' }, 11: stringMap('labels'), 12: stringMap('annotations'),
    13: msg('ownerReferences', 'OwnerReference', true), 14: strs('finalizers'),
  },
  OwnerReference: { 1: str('kind'), 3: str('name'), 4: str('uid'), 5: str('apiVersion'), 6: { name: 'controller', type: 'bool' }, 7: { name: 'blockOwnerDeletion', type: 'bool' } },
  LabelSelector: { 1: stringMap('matchLabels'), 2: msg('matchExpressions', 'LabelSelectorRequirement', true) },
  LabelSelectorRequirement: { 1: str('key'), 2: str('operator'), 3: strs('values') },
  // core/v1
  Namespace: { 1: META, 2: msg('spec', 'NamespaceSpec'), 3: msg('status', 'NamespaceStatus') },
  NamespaceSpec: { 1: strs('finalizers') },
  NamespaceStatus: { 1: str('phase') },
  ConfigMap: { 1: META, 2: stringMap('data'), 3: { name: 'binaryData', type: 'bytes', map: true }, 4: { name: 'immutable', type: 'bool' } },
  Secret: { 1: META, 2: { name: 'data', type: 'bytes', map: true }, 3: str('type'), 4: stringMap('stringData'), 5: { name: 'immutable', type: 'bool' } },
  ServiceAccount: { 1: META, 2: msg('secrets', 'ObjectReference', true), 3: { name: 'automountServiceAccountToken', type: 'bool' }, 4: msg('imagePullSecrets', 'LocalObjectReference', true) },
  ObjectReference: { 1: str('kind'), 2: str('namespace'), 3: str('name'), 4: str('uid'), 5: str('apiVersion'), 6: str('resourceVersion'), 7: str('fieldPath') },
  LocalObjectReference: { 1: str('name') },
  ResourceQuota: { 1: META, 2: msg('spec', 'ResourceQuotaSpec'), 3: msg('status', 'ResourceQuotaStatus') },
  ResourceQuotaSpec: { 1: { name: 'hard', type: 'quantity', map: true }, 2: strs('scopes'), 3: msg('scopeSelector', 'ScopeSelector') },
  ResourceQuotaStatus: { 1: { name: 'hard', type: 'quantity', map: true }, 2: { name: 'used', type: 'quantity', map: true } },
  ScopeSelector: { 1: msg('matchExpressions', 'ScopedResourceSelectorRequirement', true) },
  ScopedResourceSelectorRequirement: { 1: str('scopeName'), 2: str('operator'), 3: strs('values') },
  // rbac/v1
  Role: { 1: META, 2: msg('rules', 'PolicyRule', true) },
  ClusterRole: { 1: META, 2: msg('rules', 'PolicyRule', true), 3: msg('aggregationRule', 'AggregationRule') },
  AggregationRule: { 1: msg('clusterRoleSelectors', 'LabelSelector', true) },
  PolicyRule: { 1: strs('verbs'), 2: strs('apiGroups'), 3: strs('resources'), 4: strs('resourceNames'), 5: strs('nonResourceURLs') },
  RoleBinding: { 1: META, 2: msg('subjects', 'Subject', true), 3: msg('roleRef', 'RoleRef') },
  ClusterRoleBinding: { 1: META, 2: msg('subjects', 'Subject', true), 3: msg('roleRef', 'RoleRef') },
  Subject: { 1: str('kind'), 2: str('apiGroup'), 3: str('name'), 4: str('namespace') },
  RoleRef: { 1: str('apiGroup'), 2: str('kind'), 3: str('name') },
  // authorization/v1 and authentication/v1
  SubjectAccessReview: { 1: META, 2: msg('spec', 'SubjectAccessReviewSpec') },
  LocalSubjectAccessReview: { 1: META, 2: msg('spec', 'SubjectAccessReviewSpec') },
  SubjectAccessReviewSpec: {
    1: msg('resourceAttributes', 'ResourceAttributes'), 2: msg('nonResourceAttributes', 'NonResourceAttributes'), 3: str('user'), 4: strs('groups'),
    5: { name: 'extra', type: { message: 'ExtraValue' }, map: true }, 6: str('uid'),
  },
  ExtraValue: { 1: strs('items') },
  SelfSubjectAccessReview: { 1: META, 2: msg('spec', 'SelfSubjectAccessReviewSpec') },
  SelfSubjectAccessReviewSpec: { 1: msg('resourceAttributes', 'ResourceAttributes'), 2: msg('nonResourceAttributes', 'NonResourceAttributes') },
  ResourceAttributes: { 1: str('namespace'), 2: str('verb'), 3: str('group'), 4: str('version'), 5: str('resource'), 6: str('subresource'), 7: str('name') },
  NonResourceAttributes: { 1: str('path'), 2: str('verb') },
  SelfSubjectRulesReview: { 1: META, 2: msg('spec', 'SelfSubjectRulesReviewSpec') },
  SelfSubjectRulesReviewSpec: { 1: str('namespace') },
  SelfSubjectReview: { 1: META },
};

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

class Reader {
  private offset = 0;
  private readonly buf: Buffer;

  constructor(buf: Buffer) {
    this.buf = buf;
  }

  done(): boolean {
    return this.offset >= this.buf.length;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = this.buf[this.offset++];
      if (byte === undefined) throw new Error('truncated varint');
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  }

  bytes(): Buffer {
    const length = Number(this.varint());
    const out = this.buf.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.offset += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.offset += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
  }
}

function toTime(value: Record<string, unknown>): string | undefined {
  const seconds = Number(value.seconds ?? 0);
  if (seconds === 0) return undefined;
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function scalar(type: Scalar, reader: Reader, wireType: number): unknown {
  switch (type) {
    case 'string': return reader.bytes().toString('utf8');
    case 'bytes': return reader.bytes().toString('base64');
    case 'int': return Number(BigInt.asIntN(64, reader.varint()));
    case 'bool': return reader.varint() !== 0n;
    case 'time': return toTime(decodeMessage({ 1: { name: 'seconds', type: 'int' }, 2: { name: 'nanos', type: 'int' } }, reader.bytes()));
    case 'quantity': return decodeMessage({ 1: str('string') }, reader.bytes()).string;
    default: reader.skip(wireType); return undefined;
  }
}

function value(type: FieldType, reader: Reader, wireType: number): unknown {
  return typeof type === 'string' ? scalar(type, reader, wireType) : decodeMessage(schema(type.message), reader.bytes());
}

function schema(name: string): Record<number, Field> {
  const found = MESSAGES[name];
  if (!found) throw new Error(`no protobuf schema for ${name}`);
  return found;
}

/** Zero values are dropped, as JSON's omitempty would (empty messages stay: `spec: {}`). */
function isZero(v: unknown): boolean {
  return v === undefined || v === '' || v === false || v === 0;
}

function decodeMessage(fields: Record<number, Field>, buf: Buffer): Record<string, unknown> {
  const reader = new Reader(buf);
  const out: Record<string, unknown> = {};
  while (!reader.done()) {
    const tag = Number(reader.varint());
    const number = tag >> 3;
    const wireType = tag & 7;
    const field = fields[number];
    if (!field) {
      reader.skip(wireType);
      continue;
    }
    if (field.map) {
      const entry = decodeMessage({ 1: str('key'), 2: { name: 'value', type: field.type } }, reader.bytes());
      const map = (out[field.name] ??= {}) as Record<string, unknown>;
      map[String(entry.key ?? '')] = entry.value ?? (field.type === 'string' || field.type === 'bytes' ? '' : {});
      continue;
    }
    if (field.repeated) {
      const items = (out[field.name] ??= []) as unknown[];
      items.push(value(field.type, reader, wireType) ?? '');
      continue;
    }
    const decoded = value(field.type, reader, wireType);
    if (!isZero(decoded)) out[field.name] = decoded;
  }
  return out;
}

export function isProtobuf(contentType: string | undefined): boolean {
  return (contentType ?? '').startsWith('application/vnd.kubernetes.protobuf');
}

/** The JSON form of a protobuf-encoded object (runtime.Unknown envelope with the "k8s\0" magic). */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (!body.subarray(0, 4).equals(MAGIC)) throw protobufError('missing the k8s protobuf magic prefix');
  try {
    const envelope = decodeMessage(schema('Unknown'), body.subarray(4));
    const typeMeta = (isObject(envelope.typeMeta) ? envelope.typeMeta : {}) as { apiVersion?: string; kind?: string };
    const kind = typeMeta.kind ?? '';
    if (!MESSAGES[kind]) throw protobufError(`kube-sim cannot decode ${kind || 'this kind'} from protobuf; send JSON`);
    const raw = Buffer.from(String(envelope.raw ?? ''), 'base64');
    return { apiVersion: typeMeta.apiVersion, kind, ...decodeMessage(schema(kind), raw) };
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw protobufError((error as Error).message);
  }
}

function protobufError(message: string): ApiError {
  return new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 415, reason: 'UnsupportedMediaType', message });
}
