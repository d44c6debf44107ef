// How the end-to-end harness finds its binaries (the control plane's, the real node's): the pinned versions read
// from the go.mod files the build scripts use, the environment variables first, then the build
// scripts' cache, and a reason naming the script to run when a binary is missing.

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findControlPlaneBinaries, findRealNodeBinaries, pinnedVersion } from './binaries.js';

describe('pinnedVersion', () => {
  const cases: { name: string; goMod: string; module: string; want: string | null }[] = [
    { name: 'a single-line require', goMod: 'module x\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v1.37.2\n', module: 'k8s.io/kubernetes', want: 'v1.37.2' },
    { name: 'inside a require block', goMod: 'require (\n\tgo.etcd.io/etcd/server/v3 v3.7.3\n\tgithub.com/x/y v1.0.0 // indirect\n)\n', module: 'go.etcd.io/etcd/server/v3', want: 'v3.7.3' },
    { name: 'a replace line is not a requirement', goMod: 'replace k8s.io/api => k8s.io/api v0.37.2\n', module: 'k8s.io/api', want: null },
    { name: 'another module with the same prefix', goMod: 'require k8s.io/kubernetes-extra v1.0.0\n', module: 'k8s.io/kubernetes', want: null },
    { name: 'a pseudo-version is not a release', goMod: 'require k8s.io/kubernetes v0.0.0-20250101000000-abcdef\n', module: 'k8s.io/kubernetes', want: null },
  ];
  for (const tc of cases) test(tc.name, () => expect(pinnedVersion(tc.goMod, tc.module)).toBe(tc.want));
});

describe('findControlPlaneBinaries', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kea-binaries-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function executable(path: string): string {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, '#!/bin/sh\n');
    chmodSync(path, 0o755);
    return path;
  }

  test('the environment variables win', () => {
    const apiserver = executable(join(dir, 'bin', 'my-apiserver'));
    const etcd = executable(join(dir, 'bin', 'my-etcd'));
    expect(findControlPlaneBinaries({ KEA_APISERVER_BIN: apiserver, KEA_ETCD_BIN: etcd, KEA_CACHE_DIR: join(dir, 'nothing') })).toEqual({ ok: true, binaries: { apiserver, etcd } });
  });

  test('the build scripts\' cache, under the pinned versions', () => {
    const apiserver = executable(join(dir, 'kube-apiserver-v1.37.2'));
    const etcd = executable(join(dir, 'etcd-v3.7.3'));
    expect(findControlPlaneBinaries({ KEA_CACHE_DIR: dir })).toEqual({ ok: true, binaries: { apiserver, etcd } });
  });

  test('a missing binary is a reason to skip that names the script to run', () => {
    executable(join(dir, 'etcd-v3.7.3'));
    const found = findControlPlaneBinaries({ KEA_CACHE_DIR: dir });
    expect(found.ok).toBe(false);
    expect(found.ok ? '' : found.reason).toMatch(/^kube-apiserver v1\.37\.2 is not built .*scripts\/build-kubernetes\.sh/);
  });

  test('a variable pointing at a file that is not executable is reported', () => {
    const notExecutable = join(dir, 'apiserver');
    writeFileSync(notExecutable, '');
    const found = findControlPlaneBinaries({ KEA_APISERVER_BIN: notExecutable, KEA_ETCD_BIN: executable(join(dir, 'etcd')) });
    expect(found.ok ? '' : found.reason).toBe(`KEA_APISERVER_BIN=${notExecutable} is not an executable file`);
  });
});

describe('findRealNodeBinaries', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kea-binaries-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function executable(path: string): string {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, '#!/bin/sh\n');
    chmodSync(path, 0o755);
    return path;
  }

  test('the cache under the pinned Kubernetes and containerd versions, and runc from PATH', () => {
    const names = ['kubelet-v1.37.2', 'kubectl-v1.37.2', 'containerd-v2.4.2', 'containerd-shim-runc-v2-v2.4.2', 'ctr-v2.4.2'];
    const [kubelet, kubectl, containerd, containerdShim, ctr] = names.map((name) => executable(join(dir, name)));
    const runc = executable(join(dir, 'path', 'runc'));
    expect(findRealNodeBinaries({ KEA_CACHE_DIR: dir, PATH: join(dir, 'path') })).toEqual({ ok: true, binaries: { kubelet, kubectl, containerd, containerdShim, ctr, runc } });
  });

  test('every missing piece is named, with the script that builds it', () => {
    const found = findRealNodeBinaries({ KEA_CACHE_DIR: dir, PATH: join(dir, 'empty'), KEA_RUNC_BIN: join(dir, 'no-runc') });
    const reason = found.ok ? '' : found.reason;
    expect(reason).toMatch(/kubelet v1\.37\.2 is not built .*scripts\/build-kubernetes\.sh/);
    expect(reason).toMatch(/containerd v2\.4\.2 is not built .*scripts\/build-containerd\.sh/);
    expect(reason).toContain(`KEA_RUNC_BIN=${join(dir, 'no-runc')} is not an executable file`);
  });
});
