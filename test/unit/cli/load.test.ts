import { describe, expect, it } from '@jest/globals';
import { formatLoadProblem, parseDocuments, templatesOf } from '../../../shared/cli/load.ts';

const template = (name: string) => ({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplate', metadata: { name }, spec: {} });

describe('parseDocuments', () => {
  it('numbers documents as they appear, empty ones counted but not returned', () => {
    const loaded = parseDocuments('f.yaml', 'a: 1\n---\n---\n# only a comment\n---\nb: 2\n');
    expect(loaded.problems).toEqual([]);
    expect(loaded.items).toEqual([
      { file: 'f.yaml', document: 1, value: { a: 1 } },
      { file: 'f.yaml', document: 4, value: { b: 2 } },
    ]);
  });

  it('reads JSON, tabs and all', () => {
    const loaded = parseDocuments('f.json', '{\n\t"a": {\n\t\t"b": [1, 2]\n\t}\n}\n');
    expect(loaded.items.map((d) => d.value)).toEqual([{ a: { b: [1, 2] } }]);
  });

  it('locates syntax errors by line and column and keeps the other documents', () => {
    const loaded = parseDocuments('f.yaml', 'a: 1\n---\nb: {x: 1, x: 2}\n---\nc: 3\n');
    expect(loaded.items.map((d) => d.value)).toEqual([{ a: 1 }, { c: 3 }]);
    expect(loaded.problems.map(formatLoadProblem)).toEqual(['f.yaml:3:11: invalid YAML: Map keys must be unique']);
  });

  it('keeps YAML 1.2 core types: yes/on stay strings', () => {
    expect(parseDocuments('f.yaml', 'a: yes\nb: on\nc: 1.10\n').items[0]!.value).toEqual({ a: 'yes', b: 'on', c: 1.1 });
  });
});

describe('templatesOf', () => {
  it('takes a NamespaceTemplate document as it is', () => {
    const found = templatesOf({ file: 'f', document: 2, value: template('a') });
    expect(found).toEqual({ items: [{ file: 'f', where: 'document 2', template: template('a') }], problems: [] });
  });

  it('takes the items of a List, refusing any item that is not a NamespaceTemplate', () => {
    const list = { apiVersion: 'v1', kind: 'List', items: [template('a'), { apiVersion: 'v1', kind: 'Secret' }, template('b')] };
    const found = templatesOf({ file: 'f', document: 1, value: list });
    expect(found.items.map((s) => s.where)).toEqual(['document 1, items[0]', 'document 1, items[2]']);
    expect(found.problems.map(formatLoadProblem)).toEqual(['f: document 1, items[1]: v1 Secret is not a NamespaceTemplate']);
  });

  it.each([
    [{ apiVersion: 'v1', kind: 'ConfigMap' }, 'v1 ConfigMap is not a NamespaceTemplate'],
    [{ kind: 'List' }, '(no apiVersion) List is not a NamespaceTemplate'],
    ['text', 'a string, not an object is not a NamespaceTemplate'],
    [[1], 'a list, not an object is not a NamespaceTemplate'],
  ])('refuses %p', (value, message) => {
    expect(templatesOf({ file: 'f', document: 3, value }).problems.map(formatLoadProblem)).toEqual([`f: document 3: ${message}`]);
  });
});
