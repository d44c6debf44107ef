// What names the machine the agent runs on, the way the kubelet reports it in its Node's
// `status.nodeInfo`: the kernel's boot ID (new at every boot), the machine ID (/etc/machine-id)
// and the firmware's system UUID. Each is null when the host's file could not be read.

export interface MachineIdentity {
  readonly bootID: string | null;
  readonly machineID: string | null;
  readonly systemUUID: string | null;
}

/** The host's identity, and why any part of it is missing (one sentence each). */
export interface HostIdentity extends MachineIdentity {
  readonly problems: readonly string[];
}

/** The fields compared, in the order they are reported. */
export const MACHINE_IDENTITY_FIELDS: readonly (keyof MachineIdentity)[] = ['bootID', 'machineID', 'systemUUID'];
