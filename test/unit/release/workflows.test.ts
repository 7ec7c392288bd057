// The release workflows, as far as a machine without Docker or GitHub can check them: the relay
// image the workflow builds is the one test/functions/relay-image.test.ts runs (same Dockerfile and
// context, the same function's bundle, on the pinned Node's major), and what it records is a
// reference `furnish install --relay-image` accepts; the CLI release publishes what
// `npm run pack:cli` packs and attaches the krew manifest filled in for it.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { imageReferenceProblem } from '../../../shared/install/plan.ts';
import { tarballName } from '../../../scripts/pack-cli.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface Step { id?: string; uses?: string; run?: string; with?: Record<string, unknown>; env?: Record<string, string> }
interface Workflow { on: Record<string, unknown>; jobs: Record<string, { steps: Step[] }> }

const steps = (path: string): Step[] => Object.values((parse(read(path)) as Workflow).jobs).flatMap((j) => j.steps);
const script = (path: string): string => steps(path).map((s) => s.run ?? '').join('\n');

describe('release-relay workflow', () => {
  const workflow = '.github/workflows/release-relay.yml';
  const build = steps(workflow).find((s) => s.uses?.startsWith('docker/build-push-action@'))!;

  it('builds infra/relay/image/Dockerfile with the repository root as context, and pushes it', () => {
    expect(build.with).toMatchObject({ file: 'infra/relay/image/Dockerfile', context: '.', push: true });
  });

  it('the image bundles and runs the function the image test bundles and runs, on the same Node major', () => {
    const dockerfile = read('infra/relay/image/Dockerfile');
    const imageTest = read('test/functions/relay-image.test.ts');
    const tested = /buildFunction\('([\w-]+)'/.exec(imageTest)?.[1];
    expect(tested).toBe('watch-relay');
    // Built from the context's sources by scripts/build.ts, its declared dependencies installed beside it, copied as the app.
    expect(dockerfile).toMatch(new RegExp(`^RUN node scripts/build\\.ts ${tested}\\b`, 'm'));
    expect(dockerfile).toMatch(new RegExp(`cd dist/${tested} \\\\\\n && npm install --omit=dev`));
    expect(dockerfile).toMatch(new RegExp(`^COPY --from=build /src/dist/${tested} /app$`, 'm'));
    // The test runs the bundle with this process's Node, the pinned one: the image's Node is of its major.
    const pinned = (JSON.parse(read('package.json')) as { devDependencies: Record<string, string> }).devDependencies.node!.split('.')[0];
    expect(process.versions.node.split('.')[0]).toBe(pinned);
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(bases).toEqual([`node:${pinned}-bookworm-slim`, `gcr.io/distroless/nodejs${pinned}-debian12:nonroot`]);
    // The context leaves out the build machine's own dist/ and node_modules: the image builds its bundle, as the test does.
    const ignored = read('.dockerignore').split('\n').map((l) => l.trim());
    expect(ignored).toEqual(expect.arrayContaining(['dist', 'node_modules']));
  });

  it('records IMAGE@DIGEST of the push, a reference `furnish install --relay-image` accepts', () => {
    const record = steps(workflow).find((s) => s.id === 'record')!;
    expect(record.env?.DIGEST).toBe(`\${{ steps.${build.id}.outputs.digest }}`);
    expect(record.env?.PUSHED).toBe(build.with!.tags!.toString().split(':$')[0]);
    expect(record.run).toContain('reference="${PUSHED}@${DIGEST}"');
    expect(record.run).toContain('$GITHUB_STEP_SUMMARY');
    expect(record.run).toContain('> relay-image.txt');
    expect(script(workflow)).toMatch(/gh release upload "\$GITHUB_REF_NAME" relay-image\.txt/);
    // docker/build-push-action's digest output is sha256:<hex>.
    expect(imageReferenceProblem(`ghcr.io/acme/furnish-relay@sha256:${'0'.repeat(64)}`)).toBeUndefined();
  });
});

describe('release-cli workflow', () => {
  const workflow = '.github/workflows/release-cli.yml';

  it('on a version tag equal to package.json, tests, packs, publishes the tarball and attaches it with the krew manifest', () => {
    expect((parse(read(workflow)) as Workflow).on).toEqual({ push: { tags: ['v*'] } });
    const run = script(workflow);
    const tarball = tarballName('*').replace('-*.tgz', '-\\*\\.tgz');
    const order = ['test "$GITHUB_REF_NAME" = "v$(node -p \'require("./package.json").version\')"', 'npm run jest -- test/unit/release', 'npm run pack:cli'].map((line) => run.indexOf(line));
    expect(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
    expect(run).toMatch(new RegExp(`^npm publish dist/${tarball} --access public`, 'm'));
    expect(run).toMatch(new RegExp(`gh release upload "\\$GITHUB_REF_NAME" dist/${tarball} dist/krew/sudo\\.yaml`));
  });
});
