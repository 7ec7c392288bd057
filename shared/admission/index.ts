export * from './types.ts';
export * from './errors.ts';
export * from './decode.ts';
export * from './response.ts';
export * from './depth.ts';
export * from './scan.ts';
