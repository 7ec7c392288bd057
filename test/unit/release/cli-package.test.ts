// The published CLI package as a user gets it: `npm pack` of what `npm run pack:cli` generates,
// installed globally into an empty prefix, then `furnish` and `kubectl-sudo` run from that prefix's
// bin/ with Node's permission model letting them read nothing but the prefix and the folder of
// their input files (so neither reads the repository); and on an older Node, one message naming
// the Node they need. Also the krew manifest: filled in for that tarball, its bin is in it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'yaml';
import { nodeFloor, olderThan } from '../../../bin/require-node.js';
import { loadKustomization } from '../../../shared/install/manifests.ts';
import { CLI_PACKAGE, binPath, krewManifest, npmPack, PROGRAMS, sha256, tarballName, writeCliPackage, type Program } from '../../../scripts/pack-cli.ts';
import { root, runFurnish, type Run } from '../cli/spawn.ts';

const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
/** The pinned Node's folder first, so that npm and the bins' `#!/usr/bin/env node` run on it. */
const PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;

/** A .tgz's entries: path and mode (ustar headers). */
function tarEntries(file: string): Map<string, number> {
  const tar = gunzipSync(readFileSync(file));
  const entries = new Map<string, number>();
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0;) {
    const field = (start: number, length: number) => tar.subarray(at + start, at + start + length).toString('utf8').replace(/\0.*$/s, '');
    const name = [field(345, 155), field(0, 100)].filter(Boolean).join('/');
    entries.set(name, parseInt(field(100, 8), 8));
    at += 512 + Math.ceil(parseInt(field(124, 12), 8) / 512) * 512;
  }
  return entries;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('the packed CLI, installed into an empty prefix', () => {
  let tmp: string;
  let tarball: string;
  let prefix: string;
  let work: string;

  /** A bin of the prefix as a user runs it (on PATH), in `work`, reading only the prefix and `work`. */
  function run(program: Program, args: string[], env: Record<string, string> = {}, childProcesses = false): Run {
    const fence = ['--permission', `--allow-fs-read=${prefix}/`, `--allow-fs-read=${work}/`, ...(childProcesses ? ['--allow-child-process', '--no-warnings=SecurityWarning'] : [])];
    const r = spawnSync(program, args, { cwd: work, encoding: 'utf8', timeout: 20_000, env: { PATH: `${join(prefix, 'bin')}:${PATH}`, NODE_OPTIONS: fence.join(' '), ...env } });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  beforeAll(async () => {
    // The real path: the permission model compares it, not a symlink's (macOS's /tmp).
    tmp = realpathSync(mkdtempSync(join(tmpdir(), 'furnish-cli-package-')));
    await writeCliPackage(join(tmp, 'package'));
    tarball = npmPack(join(tmp, 'package'), tmp);
    prefix = join(tmp, 'prefix');
    execFileSync('npm', ['install', '--global', '--prefix', prefix, '--cache', join(tmp, 'npm-cache'), '--offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: tmp, env: { ...process.env, PATH } });
    // The user's files, outside the repository: the example templates.
    work = join(tmp, 'work');
    cpSync(join(root, 'examples'), work, { recursive: true });
  }, 120_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('is named by its own scoped name, with both bins and no dependency to install', () => {
    expect(tarball.endsWith(tarballName(version))).toBe(true);
    const installed = join(prefix, 'lib', 'node_modules', CLI_PACKAGE);
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: CLI_PACKAGE, version, bin: { furnish: binPath('furnish'), 'kubectl-sudo': binPath('kubectl-sudo') } });
    expect(manifest).not.toHaveProperty('dependencies');
    expect(readdirSync(join(prefix, 'bin')).sort()).toEqual(Object.keys(PROGRAMS).sort());
    // No file of the package names a path of this clone (a bundled absolute import or read).
    for (const file of filesUnder(installed)) expect(`${file}: ${readFileSync(file, 'utf8').includes(root)}`).toBe(`${file}: false`);
    // What `furnish install` applies is all there: infra/ of the package renders as the clone's does.
    expect(loadKustomization(join(installed, 'infra'))).toEqual(loadKustomization());
  });

  it('furnish: --version, --help, render and webhooks (infra/ from the package) give what the clone gives', async () => {
    expect(run('furnish', ['--version'])).toEqual({ status: 0, stdout: `furnish ${version}\n`, stderr: '' });
    const help = run('furnish', ['--help']);
    expect(help).toEqual(await runFurnish(['--help']));
    expect(help.stdout).toMatch(/^Usage: furnish <command>/);
    const render = run('furnish', ['render', '-f', work, '-n', 'team-a', '--creator', 'alice']);
    expect(render.stdout).toContain('namespace: team-a');
    expect(render).toEqual(await runFurnish(['render', '-f', work, '-n', 'team-a', '--creator', 'alice']));
    const webhooks = run('furnish', ['webhooks', '--url', 'https://f.example.com', '--cluster', 'c1']);
    expect(webhooks.stdout).toContain('https://f.example.com/mutate-namespace');
    expect(webhooks).toEqual(await runFurnish(['webhooks', '--url', 'https://f.example.com', '--cluster', 'c1']));
  });

  it('kubectl-sudo: --help, and a command run through kubectl as the sudoers group', () => {
    const help = run('kubectl-sudo', ['--help']);
    expect([help.status, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toMatch(/^usage: kubectl sudo /);
    // A kubectl that answers the LNamespace lookup and the impersonation check, and prints the command it is finally given.
    const kubectl = join(work, 'kubectl');
    writeFileSync(kubectl, `#!/bin/sh
case "$*" in
  *"get lnamespaces.furnish.dev"*) printf '%s' '{"status":{"sudo":{"group":"furnish:sudoers:shop","standIn":"furnish:sudo:shop:1"}}}' ;;
  *"can-i impersonate"*) echo yes ;;
  *) echo "ran: $*" ;;
esac
`);
    chmodSync(kubectl, 0o755);
    const sudo = run('kubectl-sudo', ['get', 'pods', '-n', 'shop'], { KUBECTL: kubectl, KUBECTL_SUDO_USER: 'carol' }, true);
    expect(sudo).toEqual({ status: 0, stdout: 'ran: --as carol --as-group furnish:sudoers:shop get pods -n shop\n', stderr: '' });
  });

  it('on a Node older than engines.node, both say which Node they need: one message, exit 1, no stack trace', () => {
    // The system's Node where it is older (Node 20 on the CI machine: the real parse of the check);
    // elsewhere this Node, told by a preload that it is 20.0.0.
    const system = ['/usr/bin/node', '/usr/local/bin/node'].map((node) => ({ node, v: spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout?.trim() }))
      .find(({ v }) => v && olderThan(v, nodeFloor()));
    const old = system ? [system.node] : [process.execPath, '--import', 'data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:"20.0.0"}});Object.defineProperty(process,"version",{value:"v20.0.0"})'];
    const seen = system?.v ?? 'v20.0.0';
    for (const program of Object.keys(PROGRAMS)) {
      const r = spawnSync(old[0]!, [...old.slice(1), join(prefix, 'bin', program), '--version'], { cwd: work, encoding: 'utf8', env: { PATH } });
      expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 1, stdout: '' });
      expect(r.stderr).toBe(`${program} needs Node.js ${nodeFloor()} or later; this is ${seen} (${old[0]}).\nInstall that Node.js (https://nodejs.org, or your version manager), then run it again.\n`);
    }
    // The clone's bin/furnish.js shares the check (bin/require-node.js), with its own hint.
    const clone = spawnSync(old[0]!, [...old.slice(1), join(root, 'bin', 'furnish.js'), '--version'], { cwd: work, encoding: 'utf8', env: { PATH } });
    expect(clone).toMatchObject({ status: 1, stdout: '', stderr: `furnish needs Node.js ${nodeFloor()} or later; this is ${seen} (${old[0]}).\nIn a clone of the repository, \`npx --no furnish\` runs it on the Node the project pins (npm install first).\n` });
  });

  it('the krew manifest, filled in for this tarball, names it by its sha256, and its bin is an executable file of it', () => {
    const template = readFileSync(join(root, 'krew', 'sudo.yaml'), 'utf8');
    const manifest = parse(krewManifest(template, { version, repository: 'acme/furnish', sha256: sha256(tarball) })) as {
      apiVersion: string; kind: string; metadata: { name: string };
      spec: { version: string; caveats: string; platforms: { uri: string; sha256: string; bin: string; files: { from: string; to: string }[]; selector: unknown }[] };
    };
    expect(manifest).toMatchObject({ apiVersion: 'krew.googlecontainertools.github.com/v1alpha2', kind: 'Plugin', metadata: { name: 'sudo' }, spec: { version: `v${version}` } });
    // The Node requirement is the package's.
    expect(manifest.spec.caveats).toContain(`Node.js ${nodeFloor()} or later`);
    const entries = tarEntries(tarball);
    expect(manifest.spec.platforms.length).toBeGreaterThan(0);
    for (const platform of manifest.spec.platforms) {
      expect(platform.uri).toBe(`https://github.com/acme/furnish/releases/download/v${version}/${tarballName(version)}`);
      expect(platform.sha256).toBe(sha256(tarball));
      expect(platform.selector).toBeDefined();
      // Each `from` is a folder's contents (`dir/*`), copied to `to`: the bin is where that puts it.
      const installed = new Map(platform.files.flatMap(({ from, to }) => {
        expect(from).toMatch(/^[\w-]+\/\*$/);
        const dir = from.slice(0, -1);
        return [...entries].filter(([name]) => name.startsWith(dir)).map(([name, mode]) => [join(to, name.slice(dir.length)), mode] as const);
      }));
      expect(platform.bin).toBe(binPath('kubectl-sudo'));
      expect((installed.get(platform.bin) ?? 0) & 0o111).toBe(0o111);
    }
  });

  it('the krew manifest refuses a sha256 that is not one and a placeholder left unfilled', () => {
    const template = readFileSync(join(root, 'krew', 'sudo.yaml'), 'utf8');
    expect(() => krewManifest(template, { version, repository: 'acme/furnish', sha256: 'TODO' })).toThrow(/sha256 must be 64 hex digits/);
    expect(() => krewManifest(`${template}\n# {{OTHER}}\n`, { version, repository: 'acme/furnish', sha256: 'a'.repeat(64) })).toThrow(/no value for \{\{OTHER\}\}/);
  });
});
