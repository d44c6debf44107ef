// nodefs, imagefs and containerfs, and the filesystem layout the kubelet discovers from them: a
// dedicated image filesystem when the image filesystem is on another device than the kubelet's
// root directory (kubelet `HasDedicatedImageFs` compares devices), and a split container
// filesystem when container writable layers are on another device than images.

import type { FsStats } from '../api/summary.js';
import type { HostFs } from '../host/host-fs.js';
import { describeError } from '../host/read-result.js';
import { statfsToFsStats } from './fs-stats.js';

export interface NodeFilesystems {
  readonly nodeFs: FsStats | undefined;
  readonly imageFs: FsStats | undefined;
  readonly containerFs: FsStats | undefined;
  readonly dedicatedImageFs: boolean;
  readonly splitContainerFs: boolean;
}

export interface FilesystemPaths {
  readonly kubeletRootDir: string;
  readonly imageFsPath: string;
  readonly containerFsPath: string;
}

/** Reads the three filesystems concurrently; a failure leaves that stat out and is reported. */
export async function readNodeFilesystems(fs: HostFs, paths: FilesystemPaths, time: string, report: (reason: string) => void): Promise<NodeFilesystems> {
  const statfsOf = async (label: string, path: string): Promise<FsStats | undefined> => {
    try {
      return statfsToFsStats(await fs.statfs(path), time);
    } catch (error) {
      report(`${label} not observed: statfs ${path}: ${describeError(error)}`);
      return undefined;
    }
  };
  const deviceOf = async (path: string): Promise<bigint | undefined> => {
    try {
      return await fs.deviceOf(path);
    } catch (error) {
      report(`filesystem layout unknown: stat ${path}: ${describeError(error)}`);
      return undefined;
    }
  };
  const [nodeFs, imageFs, containerFs, nodeDev, imageDev, containerDev] = await Promise.all([
    statfsOf('nodefs', paths.kubeletRootDir),
    statfsOf('imagefs', paths.imageFsPath),
    statfsOf('containerfs', paths.containerFsPath),
    deviceOf(paths.kubeletRootDir),
    deviceOf(paths.imageFsPath),
    deviceOf(paths.containerFsPath),
  ]);
  // An unknown device is taken as "not separate": the single-filesystem layout is the kubelet's default.
  const dedicatedImageFs = nodeDev !== undefined && imageDev !== undefined && nodeDev !== imageDev;
  const splitContainerFs = dedicatedImageFs && containerDev !== undefined && containerDev !== imageDev;
  return { nodeFs, imageFs, containerFs, dedicatedImageFs, splitContainerFs };
}
