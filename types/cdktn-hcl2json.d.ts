// The package's own declarations pull in `/// <reference lib="dom" />`, whose fetch types then
// clash with Node's for the whole project; tsconfig `paths` points the import here instead.
export function parse(filename: string, contents: string): Promise<Record<string, unknown>>;
export function getReferencesInExpression(filename: string, expression: string): Promise<{ value: string }[]>;
export function getExpressionAst(filename: string, expression: string): Promise<unknown>;
